// For the RNN, GRU and LSTM tests only (eval/ops/rnn/rnn_test.cpp,
// eval/ops/rnn/attrs_test.cpp): a float64 reference written from the spec's
// equations (one direction at a time over the whole time axis, a reverse
// pass flipping it, steps past a sequence's length masked: they keep the
// state and leave Y zero) and a runner for one node.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace bnorm::rnn_test {


using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;
using bnorm::test::set_floats;
using bnorm::test::set_string;
using bnorm::test::set_strings;
using Fn = std::function<double(double)>;
using bnorm::test::Attrs;

inline double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
const Fn kSigmoid = sigmoid;
const Fn kTanh = [](double x) { return std::tanh(x); };

// Deterministic values in [-scale, scale).
inline std::vector<double> values(size_t n, uint32_t seed, double scale = 1.0) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = scale * (static_cast<double>(s >> 8) / static_cast<double>(1u << 24) * 2 - 1);
  }
  return v;
}

// One recurrent node's inputs and attributes, in layout 0.
struct Case {
  std::string op = "LSTM";
  int64_t seq = 3, batch = 2, input = 3, hidden = 2;
  std::string direction = "forward";
  std::vector<int64_t> lens;  // empty: no sequence_lens input
  bool bias = true, init_h = false, init_c = false, peepholes = false;
  std::vector<std::vector<Fn>> fns;  // per direction; empty: the op's defaults
  double clip = 0;                   // 0: no clip
  bool linear_before_reset = false, input_forget = false;
  Attrs attrs;  // extra attributes (activations, ...) for the node
  std::vector<double> x, w, r, b, h0, c0, p;

  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t gates() const { return op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1); }
  void fill() {
    const auto n = [](int64_t v) { return static_cast<size_t>(v); };
    x = values(n(seq * batch * input), 1);
    w = values(n(dirs() * gates() * hidden * input), 2, 0.8);
    r = values(n(dirs() * gates() * hidden * hidden), 3, 0.8);
    b = bias ? values(n(dirs() * 2 * gates() * hidden), 4, 0.5) : std::vector<double>(n(dirs() * 2 * gates() * hidden));
    h0 = init_h ? values(n(dirs() * batch * hidden), 5) : std::vector<double>(n(dirs() * batch * hidden));
    c0 = init_c ? values(n(dirs() * batch * hidden), 6) : std::vector<double>(n(dirs() * batch * hidden));
    p = peepholes ? values(n(dirs() * 3 * hidden), 7) : std::vector<double>(n(dirs() * 3 * hidden));
    if (fns.empty()) {
      const std::vector<Fn> def = op == "LSTM" ? std::vector<Fn>{kSigmoid, kTanh, kTanh}
                                               : (op == "GRU" ? std::vector<Fn>{kSigmoid, kTanh} : std::vector<Fn>{kTanh});
      fns.assign(static_cast<size_t>(dirs()), def);
    }
  }
};

struct Out {
  std::vector<double> y, yh, yc;
};

// The spec's equations, one direction over the whole time axis at a time.
inline Out reference(const Case& c) {
  const int64_t H = c.hidden, G = c.gates(), D = c.dirs();
  Out o{std::vector<double>(static_cast<size_t>(c.seq * D * c.batch * H)), c.h0, c.c0};
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = c.direction == "reverse" || d == 1;
    const auto act = [&](size_t i, double v) {
      if (c.clip > 0) v = std::min(std::max(v, -c.clip), c.clip);
      return c.fns[static_cast<size_t>(d)][i](v);
    };
    const auto dot = [&](const std::vector<double>& m, int64_t cols, int64_t g, int64_t j, const std::vector<double>& v) {
      double s = 0;
      for (int64_t k = 0; k < cols; ++k) s += m[static_cast<size_t>(((d * G + g) * H + j) * cols + k)] * v[static_cast<size_t>(k)];
      return s;
    };
    const auto wb = [&](int64_t g, int64_t j) { return c.b[static_cast<size_t>(d * 2 * G * H + g * H + j)]; };
    const auto rb = [&](int64_t g, int64_t j) { return c.b[static_cast<size_t>(d * 2 * G * H + (G + g) * H + j)]; };
    for (int64_t s = 0; s < c.seq; ++s) {
      const int64_t t = rev ? c.seq - 1 - s : s;
      for (int64_t bi = 0; bi < c.batch; ++bi) {
        if (!c.lens.empty() && t >= c.lens[static_cast<size_t>(bi)]) continue;
        const size_t at = static_cast<size_t>((d * c.batch + bi) * H);
        std::vector<double> x(c.x.begin() + (t * c.batch + bi) * c.input, c.x.begin() + (t * c.batch + bi + 1) * c.input);
        std::vector<double> h(o.yh.begin() + at, o.yh.begin() + at + H), cs(o.yc.begin() + at, o.yc.begin() + at + H);
        std::vector<double> hn(static_cast<size_t>(H)), cn(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
        std::vector<double> r(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          const auto pre = [&](int64_t g) { return dot(c.w, c.input, g, j, x) + dot(c.r, H, g, j, h) + wb(g, j) + rb(g, j); };
          if (c.op == "RNN") {
            hn[j] = act(0, pre(0));
          } else if (c.op == "GRU") {
            r[j] = act(0, pre(1));
            rh[j] = r[j] * h[j];
          } else {
            const double* P = &c.p[static_cast<size_t>(d * 3 * H)];
            const double i = act(0, pre(0) + P[j] * cs[j]);
            const double f = c.input_forget ? 1 - i : act(0, pre(2) + P[2 * H + j] * cs[j]);
            cn[j] = f * cs[j] + i * act(1, pre(3));
            hn[j] = act(0, pre(1) + P[H + j] * cn[j]) * act(2, cn[j]);
          }
        }
        if (c.op == "GRU") {
          for (int64_t j = 0; j < H; ++j) {
            const double z = act(0, dot(c.w, c.input, 0, j, x) + dot(c.r, H, 0, j, h) + wb(0, j) + rb(0, j));
            const double xh = dot(c.w, c.input, 2, j, x) + wb(2, j);
            const double hh = c.linear_before_reset ? act(1, xh + r[j] * (dot(c.r, H, 2, j, h) + rb(2, j)))
                                                    : act(1, xh + dot(c.r, H, 2, j, rh) + rb(2, j));
            hn[j] = (1 - z) * hh + z * h[j];
          }
        }
        std::copy(hn.begin(), hn.end(), o.yh.begin() + at);
        if (c.op == "LSTM") std::copy(cn.begin(), cn.end(), o.yc.begin() + at);
        std::copy(hn.begin(), hn.end(), o.y.begin() + ((t * D + d) * c.batch + bi) * H);
      }
    }
  }
  return o;
}

// Runs the case's node at `opset` in `dtype` (layout 1 when batch_first).
inline std::vector<Tensor> run(const Case& c, int64_t opset, DType dtype = DType::float64, bool batch_first = false) {
  const int64_t D = c.dirs(), H = c.hidden, G = c.gates();
  std::vector<double> x = c.x, h0 = c.h0, c0 = c.c0;
  if (batch_first) {
    for (int64_t t = 0; t < c.seq; ++t)
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t k = 0; k < c.input; ++k) x[static_cast<size_t>((b * c.seq + t) * c.input + k)] = c.x[static_cast<size_t>((t * c.batch + b) * c.input + k)];
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < H; ++j) {
          h0[static_cast<size_t>((b * D + d) * H + j)] = c.h0[static_cast<size_t>((d * c.batch + b) * H + j)];
          c0[static_cast<size_t>((b * D + d) * H + j)] = c.c0[static_cast<size_t>((d * c.batch + b) * H + j)];
        }
  }
  const std::vector<int64_t> xd = batch_first ? std::vector<int64_t>{c.batch, c.seq, c.input} : std::vector<int64_t>{c.seq, c.batch, c.input};
  const std::vector<int64_t> sd = batch_first ? std::vector<int64_t>{c.batch, D, H} : std::vector<int64_t>{D, c.batch, H};
  GraphBuilder g(opset);
  std::vector<std::string> in{"X", "W", "R", "", "", "", "", ""};
  g.initializer("X", Tensor::from_f64(dtype, xd, x));
  g.initializer("W", Tensor::from_f64(dtype, {D, G * H, c.input}, c.w));
  g.initializer("R", Tensor::from_f64(dtype, {D, G * H, H}, c.r));
  if (c.bias) g.initializer(in[3] = "B", Tensor::from_f64(dtype, {D, 2 * G * H}, c.b));
  if (!c.lens.empty()) {
    g.initializer(in[4] = "L", Tensor::from_f64(DType::int32, {c.batch}, std::vector<double>(c.lens.begin(), c.lens.end())));
  }
  if (c.init_h) g.initializer(in[5] = "H0", Tensor::from_f64(dtype, sd, h0));
  if (c.init_c && c.op == "LSTM") g.initializer(in[6] = "C0", Tensor::from_f64(dtype, sd, c0));
  if (c.peepholes && c.op == "LSTM") g.initializer(in[7] = "P", Tensor::from_f64(dtype, {D, 3 * H}, c.p));
  while (in.back().empty()) in.pop_back();
  std::vector<std::string> out{"Y", "Y_h"};
  if (c.op == "LSTM") out.push_back("Y_c");
  auto& n = g.node(c.op, in, out, "rnn");
  set_attr(n, "hidden_size", H);
  if (c.direction != "forward") set_string(n, "direction", c.direction);
  if (batch_first) set_attr(n, "layout", int64_t{1});
  if (c.clip > 0) set_attr(n, "clip", static_cast<float>(c.clip));
  if (c.linear_before_reset) set_attr(n, "linear_before_reset", int64_t{1});
  if (c.input_forget) set_attr(n, "input_forget", int64_t{1});
  if (c.attrs) c.attrs(n);
  for (const auto& o : out) g.output(o);
  const auto r = bnorm::evaluate(g.model(), {});
  std::vector<Tensor> got;
  for (const auto& o : out) got.push_back(r.at(o));
  return got;
}

inline void check_close(const Tensor& got, const std::vector<int64_t>& dims, const std::vector<double>& want, double tol) {
  REQUIRE(got.dims == dims);
  const auto v = got.to_f64();
  REQUIRE(v.size() == want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    CHECK(v[i] == Approx(want[i]).margin(tol).epsilon(tol));
  }
}

// Runs the case and compares every output with the reference.
inline void check_case(Case c, int64_t opset = 22, DType dtype = DType::float64, double tol = 1e-12) {
  c.fill();
  for (auto* v : {&c.x, &c.w, &c.r, &c.b, &c.h0, &c.c0, &c.p}) {  // the inputs the node sees
    *v = Tensor::from_f64(dtype, {static_cast<int64_t>(v->size())}, *v).to_f64();
  }
  const Out want = reference(c);
  const auto got = run(c, opset, dtype);
  const int64_t D = c.dirs();
  check_close(got[0], {c.seq, D, c.batch, c.hidden}, want.y, tol);
  check_close(got[1], {D, c.batch, c.hidden}, want.yh, tol);
  if (c.op == "LSTM") check_close(got[2], {D, c.batch, c.hidden}, want.yc, tol);
}


}  // namespace bnorm::rnn_test
