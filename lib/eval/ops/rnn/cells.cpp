// RNN and GRU cells, every version (RNN 1, 7, 14, 22; GRU 1, 3, 7, 14, 22).
// What they share with LSTM (inputs, directions, layout, sequence_lens,
// activations, clip) is in rnn.cpp. Per direction, with f and g its
// activations and every product a dot product over a row of W or R:
//   RNN  Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi)      (default f = Tanh)
//   GRU  zt = f(Xt*(Wz^T) + Ht-1*(Rz^T) + Wbz + Rbz)      (default f = Sigmoid,
//        rt = f(Xt*(Wr^T) + Ht-1*(Rr^T) + Wbr + Rbr)       g = Tanh)
//        ht = g(Xt*(Wh^T) + (rt (.) Ht-1)*(Rh^T) + Rbh + Wbh)     linear_before_reset = 0
//        ht = g(Xt*(Wh^T) + rt (.) (Ht-1*(Rh^T) + Rbh) + Wbh)     linear_before_reset != 0
//        Ht = (1 - zt) (.) ht + zt (.) Ht-1
// GRU-1 has no linear_before_reset attribute (it came with GRU-3): a
// non-zero one on a GRU-1 node is refused, not run with version 3's meaning.
// Outputs: Y (every step's H), Y_h (the last valid step's H).
#include <algorithm>

#include "core/error.h"
#include "model/attrs.h"
#include "eval/ops/rnn/rnn_common.h"
#include "eval/ops/rnn/ops.h"

namespace bnorm::eval::rnn {

namespace {

// One RNN step of direction d, batch entry bi at time t; h is updated.
void rnn_step(const Setup& s, int64_t d, int64_t bi, int64_t t, double* h, std::vector<double>& gx,
              std::vector<double>& gh) {
  input_part(s, d, bi, t, gx.data());
  recurrent_part(s, d, h, 0, gh.data());
  for (int64_t j = 0; j < s.hidden; ++j) h[j] = s.apply(d, 0, gx[j] + gh[j]);
}

struct GruBuffers {
  std::vector<double> gx, gz, gr, gh, z, r, rh;
  explicit GruBuffers(int64_t hidden) : gx(3 * static_cast<size_t>(hidden)) {
    for (auto* v : {&gz, &gr, &gh, &z, &r, &rh}) v->resize(static_cast<size_t>(hidden));
  }
};

void gru_step(const Setup& s, bool linear_before_reset, int64_t d, int64_t bi, int64_t t, double* h, GruBuffers& w) {
  const int64_t n = s.hidden;
  input_part(s, d, bi, t, w.gx.data());
  recurrent_part(s, d, h, 0, w.gz.data());
  recurrent_part(s, d, h, n, w.gr.data());
  for (int64_t j = 0; j < n; ++j) {
    w.z[j] = s.apply(d, 0, w.gx[j] + w.gz[j]);
    w.r[j] = s.apply(d, 0, w.gx[n + j] + w.gr[j]);
  }
  if (linear_before_reset) {
    recurrent_part(s, d, h, 2 * n, w.gh.data());
    for (int64_t j = 0; j < n; ++j) w.gh[j] *= w.r[j];
  } else {
    for (int64_t j = 0; j < n; ++j) w.rh[j] = w.r[j] * h[j];
    recurrent_part(s, d, w.rh.data(), 2 * n, w.gh.data());
  }
  for (int64_t j = 0; j < n; ++j) {
    const double ht = s.apply(d, 1, w.gx[2 * n + j] + w.gh[j]);
    h[j] = (1 - w.z[j]) * ht + w.z[j] * h[j];
  }
}

double* state_of(std::vector<double>& state, const Setup& s, int64_t d, int64_t bi) {
  return state.data() + (d * s.batch + bi) * s.hidden;
}

void store_step(std::vector<double>& y, const Setup& s, int64_t t, int64_t d, int64_t bi, const double* h) {
  std::copy_n(h, s.hidden, y.data() + ((t * s.dirs + d) * s.batch + bi) * s.hidden);
}

}  // namespace

Tensors op_rnn(const OpContext& ctx) {
  const Setup s = read_setup(ctx, OpSpec{"RNN", 1, 6, 2, {"Tanh"}});
  std::vector<double> h = read_state(ctx, s, 5, "initial_h");
  std::vector<double> y = y_buffer(s);
  std::vector<double> gx(static_cast<size_t>(s.hidden)), gh(static_cast<size_t>(s.hidden));
  for (int64_t d = 0; d < s.dirs; ++d) {
    for (int64_t bi = 0; bi < s.batch; ++bi) {
      double* hd = state_of(h, s, d, bi);
      for (int64_t k = 0; k < s.lens[bi]; ++k) {
        const int64_t t = s.time(d, bi, k);
        rnn_step(s, d, bi, t, hd, gx, gh);
        store_step(y, s, t, d, bi, hd);
      }
    }
  }
  return finish(ctx, s, y, h);
}

Tensors op_gru(const OpContext& ctx) {
  const int64_t lbr = attr_int(*ctx.node, "linear_before_reset", 0);
  if (ctx.version < 3 && lbr != 0) {
    fail(ErrorKind::input, "GRU-{} has no attribute 'linear_before_reset' (from GRU-3)", ctx.version);
  }
  const Setup s = read_setup(ctx, OpSpec{"GRU", 3, 6, 2, {"Sigmoid", "Tanh"}});
  std::vector<double> h = read_state(ctx, s, 5, "initial_h");
  std::vector<double> y = y_buffer(s);
  GruBuffers work(s.hidden);
  for (int64_t d = 0; d < s.dirs; ++d) {
    for (int64_t bi = 0; bi < s.batch; ++bi) {
      double* hd = state_of(h, s, d, bi);
      for (int64_t k = 0; k < s.lens[bi]; ++k) {
        const int64_t t = s.time(d, bi, k);
        gru_step(s, lbr != 0, d, bi, t, hd, work);
        store_step(y, s, t, d, bi, hd);
      }
    }
  }
  return finish(ctx, s, y, h);
}

}  // namespace bnorm::eval::rnn
