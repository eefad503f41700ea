// ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul on random
// operands of every uint8/int8 pairing and random zero points (per tensor,
// per row, per column, per output channel), with strides, padding,
// dilations and groups: the ops (kernels::igemm underneath) against int64
// loops written here from the spec's formulas, and the QLinear ops'
// requantization against nearbyint of the double product of the float
// scale product (integer.cpp's documented order of rounding).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "eval/run/numeric.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

Tensor bytes(DType type, std::vector<int64_t> dims, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(type == DType::int8 ? -128 : 0, type == DType::int8 ? 127 : 255);
  V v(static_cast<size_t>(bnorm::eval::product(dims)));
  for (double& e : v) e = u(rng);
  return Tensor::from_f64(type, std::move(dims), v);
}

struct Geometry {
  int64_t n, c, h, w, m, kh, kw, group, stride, pad, dil;
  int64_t oh() const { return (h + 2 * pad - ((kh - 1) * dil + 1)) / stride + 1; }
  int64_t ow() const { return (w + 2 * pad - ((kw - 1) * dil + 1)) / stride + 1; }
};

// conv(x - zx, w - zw[m]) in int64; the padding is x_zero_point (adds 0).
std::vector<int64_t> conv_reference(const Geometry& g, const V& x, double zx, const V& w, const V& zw) {
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oy = 0; oy < g.oh(); ++oy)
        for (int64_t ox = 0; ox < g.ow(); ++ox) {
          int64_t sum = 0;
          const int64_t gi = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t iy = oy * g.stride - g.pad + ky * g.dil, ix = ox * g.stride - g.pad + kx * g.dil;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const double xv = x[static_cast<size_t>(((i * g.c + gi * cg + c) * g.h + iy) * g.w + ix)];
                const double wv = w[static_cast<size_t>(((m * cg + c) * g.kh + ky) * g.kw + kx)];
                sum += static_cast<int64_t>(xv - zx) * static_cast<int64_t>(wv - zw[zw.size() == 1 ? 0 : m]);
              }
          y.push_back(sum);
        }
  return y;
}

Attrs conv_attrs(const Geometry& g) {
  return [g](onnx::NodeProto& n) {
    set_ints(n, "strides", {g.stride, g.stride});
    set_ints(n, "pads", {g.pad, g.pad, g.pad, g.pad});
    set_ints(n, "dilations", {g.dil, g.dil});
    set_attr(n, "group", g.group);
  };
}

// saturate(round_half_even(v * (float(s1 * s2) / s3)) + zp), the scale
// product in float.
double requantized(double v, float s1, float s2, float s3, double zp, DType t) {
  const float sp = (s1 * s2) / s3;
  const double r = std::nearbyint(v * static_cast<double>(sp)) + zp;
  return t == DType::int8 ? std::fmin(std::fmax(r, -128), 127) : std::fmin(std::fmax(r, 0), 255);
}

std::vector<Geometry> geometries() {
  return {{1, 3, 9, 11, 16, 3, 3, 1, 2, 1, 1}, {2, 4, 7, 7, 6, 3, 3, 2, 1, 1, 1}, {1, 8, 6, 6, 5, 1, 1, 1, 1, 0, 1},
          {1, 5, 10, 9, 7, 3, 2, 1, 1, 2, 2},  {1, 64, 12, 12, 20, 3, 3, 1, 1, 1, 1}, {1, 6, 8, 8, 6, 3, 3, 6, 2, 1, 1}};
}

}  // namespace

TEST_CASE("ConvInteger and QLinearConv equal int64 convolutions of zero-point-shifted operands", "[eval][quant]") {
  std::mt19937 rng(9);
  size_t index = 0;
  for (const Geometry& g : geometries())
    for (DType tx : {DType::uint8, DType::int8})
      for (DType tw : {DType::uint8, DType::int8}) {
        const bool per_channel = ++index % 2 == 0;
        const Tensor x = bytes(tx, {g.n, g.c, g.h, g.w}, rng);
        const Tensor w = bytes(tw, {g.m, g.c / g.group, g.kh, g.kw}, rng);
        const Tensor zx = bytes(tx, {}, rng);
        const Tensor zw = per_channel ? bytes(tw, {g.m}, rng) : bytes(tw, {}, rng);
        const std::vector<int64_t> want = conv_reference(g, x.to_f64(), zx.to_f64()[0], w.to_f64(), zw.to_f64());
        INFO("geometry " << index << " x " << bnorm::dtype_name(tx) << " w " << bnorm::dtype_name(tw));
        const Tensor y = run_node1(10, "ConvInteger", {x, w, zx, zw}, conv_attrs(g));
        REQUIRE(y.dims == std::vector<int64_t>{g.n, g.m, g.oh(), g.ow()});
        REQUIRE(y.to_f64() == V(want.begin(), want.end()));

        // QLinearConv: + bias, per-channel w_scale, into int8 or uint8.
        const DType ty = per_channel ? DType::int8 : DType::uint8;
        V bias(static_cast<size_t>(g.m)), scales(static_cast<size_t>(g.m));
        std::uniform_int_distribution<int> ub(-5000, 5000);
        std::uniform_real_distribution<float> us(0.001f, 0.02f);
        for (size_t m = 0; m < bias.size(); ++m) {
          bias[m] = ub(rng);
          scales[m] = us(rng);
        }
        const float xs = 0.05f, ys = 0.7f;
        const Tensor yz = bytes(ty, {}, rng);
        const Tensor q = run_node1(10, "QLinearConv",
                                   {x, f32({}, {xs}), zx, w, f32({g.m}, scales), zw, f32({}, {ys}), yz,
                                    Tensor::from_f64(DType::int32, {g.m}, bias)},
                                   conv_attrs(g));
        V expect;
        const int64_t os = g.oh() * g.ow();
        for (size_t e = 0; e < want.size(); ++e) {
          const auto m = static_cast<size_t>(static_cast<int64_t>(e) / os % g.m);
          expect.push_back(requantized(static_cast<double>(want[e]) + bias[m], xs, static_cast<float>(scales[m]), ys,
                                       yz.to_f64()[0], ty));
        }
        REQUIRE(q.dtype == ty);
        REQUIRE(q.to_f64() == expect);
      }
}

TEST_CASE("MatMulInteger and QLinearMatMul equal int64 products of zero-point-shifted operands", "[eval][quant]") {
  std::mt19937 rng(4);
  struct Shape {
    std::vector<int64_t> a, b;
  };
  const std::vector<Shape> shapes = {{{7, 13}, {13, 9}}, {{2, 3, 5, 40}, {40, 33}}, {{3, 4, 70}, {3, 70, 17}},
                                     {{1, 300}, {300, 65}}};
  size_t index = 0;
  for (const Shape& s : shapes)
    for (DType ta : {DType::uint8, DType::int8})
      for (DType tb : {DType::uint8, DType::int8}) {
        ++index;
        const int64_t m = s.a[s.a.size() - 2], k = s.a.back(), n = s.b.back();
        const bool per_row = s.a.size() == 2 && m > 1 && index % 2 == 0, per_col = index % 3 == 0;
        const Tensor a = bytes(ta, s.a, rng), b = bytes(tb, s.b, rng);
        const Tensor za = bytes(ta, per_row ? std::vector<int64_t>{m} : std::vector<int64_t>{}, rng);
        const Tensor zb = bytes(tb, per_col ? std::vector<int64_t>{n} : std::vector<int64_t>{}, rng);
        const V va = a.to_f64(), vb = b.to_f64(), vza = za.to_f64(), vzb = zb.to_f64();
        const int64_t batches = bnorm::eval::product(s.a) / (m * k);
        const bool shared_b = s.b.size() == 2;
        std::vector<int64_t> want;
        for (int64_t t = 0; t < batches; ++t)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              int64_t sum = 0;
              for (int64_t p = 0; p < k; ++p) {
                const double av = va[static_cast<size_t>((t * m + i) * k + p)] - vza[per_row ? i : 0];
                const double bv = vb[static_cast<size_t>(((shared_b ? 0 : t) * k + p) * n + j)] - vzb[per_col ? j : 0];
                sum += static_cast<int64_t>(av) * static_cast<int64_t>(bv);
              }
              want.push_back(sum);
            }
        INFO("shape " << index << " a " << bnorm::dtype_name(ta) << " b " << bnorm::dtype_name(tb));
        const Tensor y = run_node1(10, "MatMulInteger", {a, b, za, zb});
        REQUIRE(y.to_f64() == V(want.begin(), want.end()));

        const float as = 0.02f, bs = 0.03f, ys = 0.25f;
        const DType ty = index % 2 ? DType::uint8 : DType::int8;
        const Tensor yz = bytes(ty, {}, rng);
        const Tensor q = run_node1(10, "QLinearMatMul", {a, f32({}, {as}), za, b, f32({}, {bs}), zb, f32({}, {ys}), yz});
        V expect;
        for (int64_t v : want) expect.push_back(requantized(static_cast<double>(v), as, bs, ys, yz.to_f64()[0], ty));
        REQUIRE(q.to_f64() == expect);
      }
}

TEST_CASE("QuantizeLinear and DequantizeLinear per axis agree with the formulas element by element", "[eval][quant]") {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-20.0f, 20.0f);
  V x(3 * 4 * 5);
  for (double& e : x) e = u(rng);
  x[0] = 0.25;  // ties
  x[1] = -2.5;
  const V scales{0.5, 0.1, 2.0, 0.03};
  const Tensor zp = bytes(DType::int8, {4}, rng);
  const Tensor y = run_node1(13, "QuantizeLinear", {f32({3, 4, 5}, x), f32({4}, scales), zp},
                             [](onnx::NodeProto& n) { set_attr(n, "axis", int64_t{1}); });
  const Tensor d = run_node1(13, "DequantizeLinear", {y, f32({4}, scales), zp},
                             [](onnx::NodeProto& n) { set_attr(n, "axis", int64_t{1}); });
  const V vy = y.to_f64(), vd = d.to_f64(), vz = zp.to_f64();
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i / 5 % 4;
    const double q = static_cast<double>(static_cast<float>(x[i]) / static_cast<float>(scales[c]));
    REQUIRE(vy[i] == std::fmin(std::fmax(std::nearbyint(q) + vz[c], -128), 127));
    REQUIRE(vd[i] == static_cast<double>(static_cast<float>(vy[i] - vz[c]) * static_cast<float>(scales[c])));
  }
}
