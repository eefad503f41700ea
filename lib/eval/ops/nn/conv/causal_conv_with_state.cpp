// CausalConvWithState-27: a causal depthwise 1-D convolution that carries its last k - 1 input positions from
// one call to the next (Concat + Conv(group = channels) + Slice in one op), with an optional fused SiLU.
//
// Contract (Changelog.md, CausalConvWithState-27; docs/semantics.md for the points the text leaves open):
//   input (B, C, L), weight (C, 1, k) with k >= 1, bias (C) optional, past_state (B, C, k - 1) optional
//   (zeros when absent). Per batch b and channel c, with p = past_state[b, c] ++ input[b, c] (length k-1+L):
//     y[t] = bias[c] + sum_{j < k} weight[c, 0, j] * p[t + j]       t in [0, L)
//     output[b, c, t] = y[t], or y[t] * sigmoid(y[t]) with activation 'silu' (alias 'swish')
//     present_state[b, c] = p[L .. L + k - 1): the last k - 1 positions of p (zeros or past values
//     among them when L < k - 1)
// Every step in float64; each output element is rounded once to the input's type.
// Preconditions, each refused with a message (Error(input)): the types the schema allows (float, float16,
// bfloat16, one type for every input), the shapes above, activation one of 'none', 'silu', 'swish'.
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/nn/conv/ops.h"

namespace bnorm::eval {

namespace {

bool silu_of(const onnx::NodeProto& n) {
  const std::string a = attr_string(n, "activation", "none");
  if (a == "none") return false;
  if (a == "silu" || a == "swish") return true;
  fail(ErrorKind::input, "activation '{}' is not one of 'none', 'silu', 'swish'", a);
}

void check_same_type(const Tensor* t, const char* what, DType type) {
  if (t && t->dtype != type) {
    fail(ErrorKind::input, "{} has type {}, it must have input's type {}", what, dtype_name(t->dtype),
         dtype_name(type));
  }
}

}  // namespace

Tensors op_causal_conv_with_state(const OpContext& ctx) {
  if (ctx.input_count() > 4 || ctx.output_count() < 1 || ctx.output_count() > 2) {
    fail(ErrorKind::input, "CausalConvWithState-27 has 2 to 4 inputs and 1 or 2 outputs");
  }
  const Tensor& x = ctx.required(0, "input");
  const Tensor& w = ctx.required(1, "weight");
  const Tensor* bias = ctx.input(2);
  const Tensor* past = ctx.input(3);
  if (x.dtype != DType::float32 && x.dtype != DType::float16 && x.dtype != DType::bfloat16) {
    fail(ErrorKind::input, "input of type {}: CausalConvWithState-27 takes float, float16 or bfloat16",
         dtype_name(x.dtype));
  }
  check_same_type(&w, "weight", x.dtype);
  check_same_type(bias, "bias", x.dtype);
  check_same_type(past, "past_state", x.dtype);
  if (x.dims.size() != 3) {
    fail(ErrorKind::input, "input is {}, it must be 3-D (batch, channels, length)", shape_str(x.dims));
  }
  const int64_t batch = x.dims[0], channels = x.dims[1], len = x.dims[2];
  if (w.dims.size() != 3 || w.dims[0] != channels || w.dims[1] != 1 || w.dims[2] < 1) {
    fail(ErrorKind::input, "weight is {}, it must be ({}, 1, k) with k >= 1", shape_str(w.dims), channels);
  }
  const int64_t k = w.dims[2], carry = k - 1;
  if (bias && bias->dims != std::vector<int64_t>{channels}) {
    fail(ErrorKind::input, "bias is {}, it must be {}", shape_str(bias->dims), shape_str({channels}));
  }
  const std::vector<int64_t> state_dims{batch, channels, carry};
  if (past && past->dims != state_dims) {
    fail(ErrorKind::input, "past_state is {}, it must be {} (batch, channels, k - 1)", shape_str(past->dims),
         shape_str(state_dims));
  }
  const bool silu = silu_of(*ctx.node);

  const std::vector<double> xv = load_values<double>(x), wv = load_values<double>(w);
  const std::vector<double> bv = bias ? load_values<double>(*bias) : std::vector<double>{};
  const std::vector<double> pv = past ? load_values<double>(*past) : std::vector<double>{};
  std::vector<double> y(static_cast<size_t>(x.numel()));
  std::vector<double> present(static_cast<size_t>(checked_buffer_numel(state_dims, 8, "present_state")));
  std::vector<double> p(static_cast<size_t>(checked_buffer_numel({carry + len}, 8, "a padded row")));
  for (int64_t row = 0; row < batch * channels; ++row) {
    const int64_t c = row % channels;
    for (int64_t i = 0; i < carry; ++i) p[i] = past ? pv[row * carry + i] : 0.0;
    for (int64_t i = 0; i < len; ++i) p[carry + i] = xv[row * len + i];
    const double* wc = wv.data() + c * k;
    for (int64_t t = 0; t < len; ++t) {
      double acc = bias ? bv[c] : 0.0;
      for (int64_t j = 0; j < k; ++j) acc += wc[j] * p[t + j];
      y[row * len + t] = silu ? acc / (1.0 + std::exp(-acc)) : acc;
    }
    for (int64_t i = 0; i < carry; ++i) present[row * carry + i] = p[len + i];
  }
  Tensors out(static_cast<size_t>(ctx.output_count()));
  out[0] = make_tensor(x.dtype, x.dims, y);
  if (ctx.wants(1)) out[1] = make_tensor(x.dtype, state_dims, present);
  return out;
}

}  // namespace bnorm::eval
