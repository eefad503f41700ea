// Conv and ConvTranspose on hostile attributes (found by fuzz_fold,
// tests/fuzz_regressions/fold/, whose verify step runs the pair in float64),
// Conv against the spec's float64 sum on every path of conv.cpp (im2col
// in stretches of columns, 1x1, depthwise by kernels::conv_plane, 1-D to
// 3-D, one thread or several), and MatMul's single product for a shared B.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

using bnorm::DType;
using bnorm::Error;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;

namespace {

std::string conv_error(const std::string& op, const std::string& attr, std::vector<int64_t> values) {
  GraphBuilder b(15);
  b.input("X", DType::float64, {1, 1, 4, 4});
  b.initializer("W", Tensor(DType::float64, {1, 1, 2, 2}));
  auto& n = b.node(op, {"X", "W"}, {"Y"}, "conv");
  auto* a = n.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
  b.output("Y");
  try {
    bnorm::evaluate(b.model(), {{"X", Tensor(DType::float64, {1, 1, 4, 4})}});
  } catch (const Error& e) {
    CHECK(e.node() == "conv");
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("Conv and ConvTranspose refuse outputs over the tensor byte limit before allocating them") {
  // 2^30 x 2^30 doubles: the padded output alone would be 8 EiB.
  const int64_t p = int64_t{1} << 30;
  CHECK_THAT(conv_error("Conv", "pads", {p, p, p, p}), Catch::Contains("the output of Conv") &&
                                                           Catch::Contains("limit of 4294967296 bytes"));
  CHECK_THAT(conv_error("ConvTranspose", "strides", {p, p}), Catch::Contains("the output of ConvTranspose"));
}

TEST_CASE("Conv refuses zero strides or dilations and negative or huge pads") {
  for (const std::string op : {"Conv", "ConvTranspose"}) {
    CHECK_THAT(conv_error(op, "strides", {0, 1}), Catch::Contains("strides and dilations must be 1"));
    CHECK_THAT(conv_error(op, "dilations", {1, -1}), Catch::Contains("strides and dilations must be 1"));
    CHECK_THAT(conv_error(op, "pads", {0, 0, -1, 0}), Catch::Contains("pads and output_padding 0"));
    CHECK_THAT(conv_error(op, "pads", {0, 0, INT64_MAX, 0}), Catch::Contains("pads and output_padding 0"));
  }
}

TEST_CASE("Conv pads around an empty X give the bias-free zeros of the padded output") {
  GraphBuilder b(15);
  b.input("X", DType::float32, {1, 1, 0, 0});
  b.initializer("W", Tensor::from_f64(DType::float32, {1, 1, 2, 2}, {1, 2, 3, 4}));
  auto& n = b.node("Conv", {"X", "W"}, {"Y"}, "conv");
  auto* a = n.add_attribute();
  a->set_name("pads");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : {1, 1, 1, 1}) a->add_ints(v);
  b.output("Y");
  const auto y = bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1, 1, 0, 0})}}).at("Y");
  CHECK(y.dims == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(y.to_f64() == std::vector<double>{0});
}

namespace {

struct ConvCase {
  std::vector<int64_t> x, w;  // X [N, C, D..], W [M, C/group, K..]
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;
};

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}

std::vector<double> random_values(size_t n, uint64_t seed) {
  std::vector<double> v(n);
  uint64_t s = seed;
  for (double& x : v) {  // xorshift, values k/64 - 1 in [-1, 1), exact in float
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = static_cast<double>(s % 128) / 64.0 - 1.0;
  }
  return v;
}

// Y of Conv on cc's shapes in float32 (X, W, B as check_conv makes them).
Tensor conv_output(const ConvCase& cc) {
  int64_t nx = 1, nw = 1;
  for (int64_t v : cc.x) nx *= v;
  for (int64_t v : cc.w) nw *= v;
  GraphBuilder b(15);
  b.input("X", DType::float32, cc.x);
  b.initializer("W", Tensor::from_f64(DType::float32, cc.w, random_values(static_cast<size_t>(nw), 2)));
  b.initializer("B", Tensor::from_f64(DType::float32, {cc.w[0]}, random_values(static_cast<size_t>(cc.w[0]), 3)));
  auto& n = b.node("Conv", {"X", "W", "B"}, {"Y"}, "conv");
  bnorm::test::set_attr(n, "group", cc.group);
  set_ints(n, "strides", cc.strides);
  set_ints(n, "dilations", cc.dilations);
  set_ints(n, "pads", cc.pads);
  b.output("Y");
  const auto xv = random_values(static_cast<size_t>(nx), 1);
  return bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, cc.x, xv)}}).at("Y");
}

// Conv in float32 against the spec's sum in float64, element by element
// within the error bound of a float sum of K + 1 terms.
void check_conv(const ConvCase& cc) {
  const size_t nd = cc.x.size() - 2;
  auto numel = [](const std::vector<int64_t>& d) {
    int64_t n = 1;
    for (int64_t v : d) n *= v;
    return n;
  };
  const auto xv = random_values(static_cast<size_t>(numel(cc.x)), 1);
  const auto wv = random_values(static_cast<size_t>(numel(cc.w)), 2);
  const auto bv = random_values(static_cast<size_t>(cc.w[0]), 3);
  GraphBuilder b(15);
  b.input("X", DType::float32, cc.x);
  b.initializer("W", Tensor::from_f64(DType::float32, cc.w, wv));
  b.initializer("B", Tensor::from_f64(DType::float32, {cc.w[0]}, bv));
  auto& n = b.node("Conv", {"X", "W", "B"}, {"Y"}, "conv");
  bnorm::test::set_attr(n, "group", cc.group);
  set_ints(n, "strides", cc.strides);
  set_ints(n, "dilations", cc.dilations);
  set_ints(n, "pads", cc.pads);
  b.output("Y");
  const Tensor y = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, cc.x, xv)}}).at("Y");
  // Spatial dims padded to 3 with ones, as the reference loop below needs.
  std::vector<int64_t> in(3, 1), k(3, 1), out(3, 1), st(3, 1), dil(3, 1), pad(3, 0);
  for (size_t d = 0; d < nd; ++d) {
    const size_t e = 3 - nd + d;
    in[e] = cc.x[2 + d], k[e] = cc.w[2 + d], st[e] = cc.strides[d], dil[e] = cc.dilations[d], pad[e] = cc.pads[d];
    out[e] = (in[e] + cc.pads[d] + cc.pads[nd + d] - ((k[e] - 1) * dil[e] + 1)) / st[e] + 1;
  }
  const int64_t m = cc.w[0], c = cc.x[1], cg = c / cc.group, mg = m / cc.group;
  std::vector<int64_t> ydims{cc.x[0], m};
  for (size_t d = 0; d < nd; ++d) ydims.push_back(out[3 - nd + d]);
  REQUIRE(y.dims == ydims);
  const auto got = y.to_f64();
  size_t at = 0;
  for (int64_t i = 0; i < cc.x[0]; ++i)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t oz = 0; oz < out[0]; ++oz)
        for (int64_t oy = 0; oy < out[1]; ++oy)
          for (int64_t ox = 0; ox < out[2]; ++ox, ++at) {
            double ref = bv[static_cast<size_t>(o)], mag = std::fabs(ref);
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ky = 0; ky < k[1]; ++ky)
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    const int64_t iz = oz * st[0] - pad[0] + kz * dil[0], iy = oy * st[1] - pad[1] + ky * dil[1];
                    const int64_t ix = ox * st[2] - pad[2] + kx * dil[2];
                    if (iz < 0 || iy < 0 || ix < 0 || iz >= in[0] || iy >= in[1] || ix >= in[2]) continue;
                    const int64_t chan = o / mg * cg + ci;
                    const auto xi = (((i * c + chan) * in[0] + iz) * in[1] + iy) * in[2] + ix;
                    const double xe = xv[static_cast<size_t>(xi)];
                    const double we = wv[static_cast<size_t>((((o * cg + ci) * k[0] + kz) * k[1] + ky) * k[2] + kx)];
                    ref += xe * we;
                    mag += std::fabs(xe * we);
                  }
            const double terms = static_cast<double>(cg * k[0] * k[1] * k[2] + 2);
            INFO("output " << at);
            REQUIRE(std::fabs(got[at] - ref) <= terms * 0x1p-24 * mag * 1.01);
          }
}

}  // namespace

TEST_CASE("Conv matches the spec's float64 sum on wide outputs, groups, depthwise groups, strides and dilations",
          "[eval][conv]") {
  // K = 72 rows: the im2col matrix is made 896 columns at a time, stretches
  // that end mid-row of the 40 x 50 output.
  check_conv({{1, 8, 40, 50}, {4, 8, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}});
  // K = 576: 128 columns at a time; strides, dilations, uneven padding, 2 images.
  check_conv({{2, 64, 21, 26}, {5, 64, 3, 3}, 1, {2, 1}, {2, 1}, {0, 1, 2, 1}});
  // Groups of 4 channels; depthwise (one channel a group) with multiplier 1 and 2.
  check_conv({{1, 8, 9, 11}, {6, 4, 3, 2}, 2, {1, 2}, {1, 1}, {1, 0, 1, 1}});
  check_conv({{2, 6, 13, 17}, {6, 1, 5, 5}, 6, {2, 2}, {1, 1}, {2, 2, 2, 2}});
  check_conv({{1, 3, 12, 9}, {6, 1, 3, 3}, 3, {1, 3}, {2, 1}, {3, 0, 0, 4}});
  // 1x1 without stride or padding: X itself is the product's right operand.
  check_conv({{2, 16, 20, 30}, {8, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}});
  // 1-D (depthwise and not) and 3-D.
  check_conv({{1, 4, 300}, {4, 1, 7}, 4, {3}, {2}, {5, 1}});
  check_conv({{1, 4, 300}, {3, 4, 7}, 1, {1}, {1}, {3, 3}});
  check_conv({{1, 3, 5, 6, 7}, {2, 3, 2, 3, 3}, 1, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}});
  check_conv({{1, 2, 5, 6, 7}, {2, 1, 2, 3, 3}, 2, {1, 1, 1}, {1, 1, 1}, {0, 1, 1, 1, 0, 1}});
}

TEST_CASE("Conv gives the same bits on one thread and on several", "[eval][conv]") {
  const int before = omp_get_max_threads();
  // Stretches of im2col columns split across threads; depthwise groups split across threads.
  for (const ConvCase& cc : {ConvCase{{1, 64, 30, 30}, {32, 64, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                             ConvCase{{2, 96, 40, 40}, {96, 1, 3, 3}, 96, {1, 1}, {1, 1}, {1, 1, 1, 1}}}) {
    omp_set_num_threads(1);
    const Tensor one = conv_output(cc);
    omp_set_num_threads(3);
    const Tensor three = conv_output(cc);
    omp_set_num_threads(before);
    REQUIRE(one.dims == three.dims);
    REQUIRE(one.bytes == three.bytes);
  }
}

TEST_CASE("MatMul with one B for every batch is one product of all of A's rows, each summed as alone",
          "[eval][conv]") {
  // A [2, 3, 4, 5] (or [5]) x B [5, 6] (or [1, 5, 6]); every element against the float64 sum.
  struct Shapes {
    std::vector<int64_t> a, b, y;
  };
  for (const Shapes& sh : {Shapes{{2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6}}, Shapes{{2, 3, 4, 5}, {1, 5, 6}, {2, 3, 4, 6}},
                           Shapes{{5}, {5, 6}, {6}}, Shapes{{3, 1, 5}, {1, 1, 5, 6}, {1, 3, 1, 6}}}) {
    int64_t na = 1, nb = 1;
    for (int64_t v : sh.a) na *= v;
    for (int64_t v : sh.b) nb *= v;
    const auto av = random_values(static_cast<size_t>(na), 4), bv = random_values(static_cast<size_t>(nb), 5);
    GraphBuilder g(13);
    g.input("A", DType::float32, sh.a);
    g.initializer("B", Tensor::from_f64(DType::float32, sh.b, bv));
    g.node("MatMul", {"A", "B"}, {"Y"}, "matmul");
    g.output("Y");
    const Tensor y = bnorm::evaluate(g.model(), {{"A", Tensor::from_f64(DType::float32, sh.a, av)}}).at("Y");
    REQUIRE(y.dims == sh.y);
    const auto got = y.to_f64();
    const size_t rows = static_cast<size_t>(na / 5);
    REQUIRE(got.size() == rows * 6);
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < 6; ++j) {
        double ref = 0, mag = 0;
        for (size_t p = 0; p < 5; ++p) {
          ref += av[r * 5 + p] * bv[p * 6 + j];
          mag += std::fabs(av[r * 5 + p] * bv[p * 6 + j]);
        }
        REQUIRE(std::fabs(got[r * 6 + j] - ref) <= 6 * 0x1p-24 * mag);
      }
  }
}
