// LSTM cell, every version (1, 7, 14, 22). What it shares with RNN and GRU
// (inputs, directions, layout, sequence_lens, activations, clip) is in
// rnn.cpp. Per direction, gates in the order i, o, f, c of W, R and B,
// activations f, g, h (default Sigmoid, Tanh, Tanh), peepholes P = [Pi, Po, Pf]
// (input 7, [dirs, 3*hidden], zeros when absent):
//   it = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Pi (.) Ct-1 + Wbi + Rbi)
//   ft = f(Xt*(Wf^T) + Ht-1*(Rf^T) + Pf (.) Ct-1 + Wbf + Rbf)
//   ct = g(Xt*(Wc^T) + Ht-1*(Rc^T) + Wbc + Rbc)
//   Ct = ft (.) Ct-1 + it (.) ct
//   ot = f(Xt*(Wo^T) + Ht-1*(Ro^T) + Po (.) Ct + Wbo + Rbo)
//   Ht = ot (.) h(Ct)
// input_forget = 1 couples the gates as ft = 1 - it (the spec only says
// "couple"; this is the coupled input-forget gate onnxruntime computes).
// Outputs: Y (every step's H), Y_h and Y_c (H and C after the last valid step).
#include <algorithm>

#include "core/error.h"
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/rnn/rnn_common.h"
#include "eval/ops/rnn/ops.h"

namespace bnorm::eval::rnn {

namespace {

struct LstmBuffers {
  std::vector<double> gx, gi, go, gf, gc, in, forget;
  explicit LstmBuffers(int64_t hidden) : gx(4 * static_cast<size_t>(hidden)) {
    for (auto* v : {&gi, &go, &gf, &gc, &in, &forget}) v->resize(static_cast<size_t>(hidden));
  }
};

// One step of direction d, batch entry bi at time t; h and c are updated.
void lstm_step(const Setup& s, bool input_forget, const double* p, int64_t d, int64_t bi, int64_t t, double* h,
               double* c, LstmBuffers& w) {
  const int64_t n = s.hidden;
  input_part(s, d, bi, t, w.gx.data());
  recurrent_part(s, d, h, 0, w.gi.data());
  recurrent_part(s, d, h, n, w.go.data());
  recurrent_part(s, d, h, 2 * n, w.gf.data());
  recurrent_part(s, d, h, 3 * n, w.gc.data());
  const double* pi = p;
  const double* po = p + n;
  const double* pf = p + 2 * n;
  for (int64_t j = 0; j < n; ++j) {
    w.in[j] = s.apply(d, 0, w.gx[j] + w.gi[j] + pi[j] * c[j]);
    w.forget[j] = input_forget ? 1 - w.in[j] : s.apply(d, 0, w.gx[2 * n + j] + w.gf[j] + pf[j] * c[j]);
  }
  for (int64_t j = 0; j < n; ++j) {
    const double cell = s.apply(d, 1, w.gx[3 * n + j] + w.gc[j]);
    c[j] = w.forget[j] * c[j] + w.in[j] * cell;
    const double out = s.apply(d, 0, w.gx[n + j] + w.go[j] + po[j] * c[j]);
    h[j] = out * s.apply(d, 2, c[j]);
  }
}

std::vector<double> read_peepholes(const OpContext& ctx, const Setup& s) {
  const std::vector<int64_t> dims{s.dirs, 3 * s.hidden};
  const Tensor* p = ctx.input(7);
  if (!p) return std::vector<double>(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "P")));
  if (p->dtype != s.dtype) fail(ErrorKind::input, "input 'P' is {}, X is {}", dtype_name(p->dtype), dtype_name(s.dtype));
  if (p->dims != dims) fail(ErrorKind::input, "input 'P' has shape {}, expected {}", shape_str(p->dims), shape_str(dims));
  return p->to_f64();
}

}  // namespace

Tensors op_lstm(const OpContext& ctx) {
  const int64_t input_forget = attr_int(*ctx.node, "input_forget", 0);
  if (input_forget != 0 && input_forget != 1) fail(ErrorKind::input, "input_forget must be 0 or 1, is {}", input_forget);
  const Setup s = read_setup(ctx, OpSpec{"LSTM", 4, 8, 3, {"Sigmoid", "Tanh", "Tanh"}});
  std::vector<double> h = read_state(ctx, s, 5, "initial_h");
  std::vector<double> c = read_state(ctx, s, 6, "initial_c");
  const std::vector<double> p = read_peepholes(ctx, s);
  std::vector<double> y = y_buffer(s);
  LstmBuffers work(s.hidden);
  for (int64_t d = 0; d < s.dirs; ++d) {
    for (int64_t bi = 0; bi < s.batch; ++bi) {
      const int64_t at = (d * s.batch + bi) * s.hidden;
      for (int64_t k = 0; k < s.lens[bi]; ++k) {
        const int64_t t = s.time(d, bi, k);
        lstm_step(s, input_forget == 1, p.data() + d * 3 * s.hidden, d, bi, t, h.data() + at, c.data() + at, work);
        std::copy_n(h.data() + at, s.hidden, y.data() + ((t * s.dirs + d) * s.batch + bi) * s.hidden);
      }
    }
  }
  return finish(ctx, s, y, h, &c);
}

}  // namespace bnorm::eval::rnn
