// What RNN, GRU and LSTM share (rnn.cpp): reading and checking the
// node (attributes, X, W, R, B, sequence_lens, initial states), the
// activation functions of their `activations` attribute, and writing Y and
// the final states in the node's layout. Every value is held in float64 in
// the layout-0 order: X as [seq][batch][input], Y as [seq][dirs][batch][hidden],
// states as [dirs][batch][hidden].
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "eval/run/op.h"

namespace bnorm::eval::rnn {

struct Activation {
  enum class Kind { relu, tanh, sigmoid, affine, leaky_relu, thresholded_relu, scaled_tanh, hard_sigmoid, elu, softsign, softplus };
  Kind kind = Kind::tanh;
  double alpha = 0;
  double beta = 0;
  double operator()(double x) const;
};

// The op-specific part of reading a node.
struct OpSpec {
  const char* name;          // "LSTM"
  int gates;                 // row blocks of W and R: 4, 3 or 1
  int max_inputs;            // 8, 6, 6
  int max_outputs;           // 3, 2, 2
  std::vector<const char*> default_activations;  // per direction
};

struct Setup {
  DType dtype = DType::undefined;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  int64_t gates = 1;          // row blocks of W and R
  bool reverse_only = false;  // direction = reverse
  bool batch_first = false;   // layout = 1
  double clip = std::numeric_limits<double>::infinity();
  std::vector<Activation> acts;  // activations per direction, direction after direction
  std::vector<int64_t> lens;     // valid steps of each batch entry
  std::vector<double> x;         // [seq][batch][input]
  std::vector<double> w, r, b;   // [dirs][gates*hidden][input|hidden], [dirs][2*gates*hidden]

  // The time index of the k-th step direction `d` takes in batch entry `bi`:
  // a reverse pass walks the valid prefix of its sequence backwards.
  int64_t time(int64_t d, int64_t bi, int64_t k) const {
    return (reverse_only || d == 1) ? lens[bi] - 1 - k : k;
  }
  const Activation& act(int64_t d, size_t j) const;
  // `clip` bounds the input of every activation; NaN stays NaN.
  double clipped(double v) const { return v > clip ? clip : (v < -clip ? -clip : v); }
  double apply(int64_t d, size_t j, double v) const { return act(d, j)(clipped(v)); }
};

Setup read_setup(const OpContext& ctx, const OpSpec& op);

// Input `index` of shape [dirs][batch][hidden] ([batch][dirs][hidden] in
// layout 1) as [dirs][batch][hidden]; zeros when absent.
std::vector<double> read_state(const OpContext& ctx, const Setup& s, size_t index, const char* what);

// W·x_t + Wb for every row of direction d and batch entry bi at time t.
void input_part(const Setup& s, int64_t d, int64_t bi, int64_t t, double* out);
// R·h + Rb for rows [first, first + hidden) of direction d.
void recurrent_part(const Setup& s, int64_t d, const double* h, int64_t first, double* out);

// A zeroed [seq][dirs][batch][hidden] buffer for Y, its size checked.
std::vector<double> y_buffer(const Setup& s);
// Y and the final states as the node's outputs, in its layout and type.
Tensor y_tensor(const Setup& s, const std::vector<double>& y);
Tensor state_tensor(const Setup& s, const std::vector<double>& state);
// The node's outputs: Y, Y_h and (LSTM, when c is given) Y_c, those it names.
Tensors finish(const OpContext& ctx, const Setup& s, const std::vector<double>& y, const std::vector<double>& h,
               const std::vector<double>* c = nullptr);

Tensors op_rnn(const OpContext& ctx);   // cells.cpp
Tensors op_gru(const OpContext& ctx);   // cells.cpp
Tensors op_lstm(const OpContext& ctx);  // lstm.cpp

}  // namespace bnorm::eval::rnn
