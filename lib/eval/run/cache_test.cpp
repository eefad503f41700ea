// Runs sharing an EvalCache (evaluator.h): weights decoded once, constant nodes run once,
// what ops derive from constant inputs kept, nothing of a run written in place.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

#include "core/error.h"
#include "support/error_of.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::Tensor;
using bnorm::test::error_of;
using bnorm::test::GraphBuilder;
using bnorm::test::random_tensor;
using bnorm::test::set_attr;

}  // namespace

TEST_CASE("runs sharing an EvalCache decode weights once and never write them in place", "[eval][cache]") {
  // Relu(w) is the last use of the initializer w: without the cache's hold
  // the Relu would write it in place, and the next run would start from
  // max(w, 0).
  GraphBuilder g(15);
  g.input("x", DType::float32, {4});
  g.initializer("w", Tensor::from_f64(DType::float32, {4}, {-1, 2, -3, 4}));
  g.initializer("w2", Tensor::from_f64(DType::float32, {4}, {5, -6, 7, -8}));
  g.node("Relu", {"w"}, {"rw"});
  g.node("Add", {"x", "rw"}, {"y"});
  g.output("y");
  g.output("w2");  // an initializer that is also an output leaves with the outputs
  const Tensor x = Tensor::from_f64(DType::float32, {4}, {0.5, 0.5, 0.5, 0.5});
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  const std::vector<double> want{0.5, 2.5, 0.5, 4.5};
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run + 1);
    const auto r = evaluate(g.model(), {{"x", x}}, opts);
    REQUIRE(r.at("y").to_f64() == want);
    REQUIRE(r.at("w2").to_f64() == std::vector<double>{5, -6, 7, -8});
    // The weights the run used are back in the cache, as decoded.
    REQUIRE(cache.weights.count("w") == 1);
    REQUIRE(cache.weights.at("w").to_f64() == std::vector<double>{-1, 2, -3, 4});
  }
}

TEST_CASE("an EvalCache given with another model or float64 setting is a usage error", "[eval][cache][errors]") {
  GraphBuilder g(15);
  g.input("x", DType::float32, {2});
  g.initializer("w", Tensor::from_f64(DType::float32, {2}, {1, 2}));
  g.node("Add", {"x", "w"}, {"y"});
  g.output("y");
  const bnorm::Model a = g.model();
  const bnorm::Model b = g.model();
  const Tensor x = Tensor::from_f64(DType::float32, {2}, {1, 1});
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  REQUIRE(evaluate(a, {{"x", x}}, opts).at("y").to_f64() == std::vector<double>{2, 3});
  const Error e = error_of([&] { evaluate(b, {{"x", x}}, opts); });
  REQUIRE(e.kind() == ErrorKind::usage);
  REQUIRE_THAT(e.message(), Catch::Contains("one model"));
}

TEST_CASE("runs sharing an EvalCache compute nodes of constants once", "[eval][cache]") {
  // Neg(w) and Relu of it read only constants: run 1 computes them, later
  // runs take their outputs from the cache; Add reads the input and runs
  // every time. Relu's output is written in place of nothing it reads.
  GraphBuilder g(15);
  g.input("x", DType::float32, {3});
  g.initializer("w", Tensor::from_f64(DType::float32, {3}, {1, -2, 3}));
  g.node("Neg", {"w"}, {"nw"});
  g.node("Relu", {"nw"}, {"rw"});
  g.node("Add", {"x", "rw"}, {"y"});
  g.output("y");
  const Tensor x = Tensor::from_f64(DType::float32, {3}, {10, 20, 30});
  bnorm::EvalCache cache;
  bnorm::EvalStats stats;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  opts.stats = &stats;
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run + 1);
    stats = {};
    REQUIRE(evaluate(g.model(), {{"x", x}}, opts).at("y").to_f64() == std::vector<double>{10, 22, 30});
    CHECK(stats.nodes_run == (run == 0 ? 3 : 1));
    CHECK(cache.weights.count("rw") == 1);
  }
  // An observer sees every node: nothing is taken from the cache then.
  int seen = 0;
  opts.on_value = [&](const std::string&, const std::string&, const Tensor&) { ++seen; };
  stats = {};
  REQUIRE(evaluate(g.model(), {{"x", x}}, opts).at("y").to_f64() == std::vector<double>{10, 22, 30});
  CHECK(seen == 3);
  CHECK(stats.nodes_run == 3);
  // A given input that overrides an initializer makes what reads it no constant.
  opts.on_value = nullptr;
  GraphBuilder h(15);
  h.input("x", DType::float32, {3});
  h.input("w", DType::float32, {3});
  h.initializer("w", Tensor::from_f64(DType::float32, {3}, {1, -2, 3}));
  h.node("Neg", {"w"}, {"nw"});
  h.node("Add", {"x", "nw"}, {"y"});
  h.output("y");
  bnorm::EvalCache cache2;
  opts.cache = &cache2;
  for (double v : {1.0, 2.0}) {
    const Tensor w = Tensor::from_f64(DType::float32, {3}, {v, v, v});
    REQUIRE(evaluate(h.model(), {{"x", x}, {"w", w}}, opts).at("y").to_f64() ==
            std::vector<double>{10 - v, 20 - v, 30 - v});
  }
}

TEST_CASE("runs sharing an EvalCache keep a Gemm's transposed constant weights, and only those", "[eval][cache]") {
  // Y = A B^T: B a [3, 2] initializer, or given by the caller (then never kept).
  GraphBuilder g(13);
  g.input("A", DType::float32, {2, 2});
  g.input("B", DType::float32, {3, 2});
  g.initializer("B", Tensor::from_f64(DType::float32, {3, 2}, {1, 2, 3, 4, 5, 6}));
  auto& n = g.node("Gemm", {"A", "B"}, {"Y"});
  set_attr(n, "transB", int64_t{1});
  g.output("Y");
  const Tensor a = Tensor::from_f64(DType::float32, {2, 2}, {1, 10, 100, 1000});
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  for (int run = 0; run < 2; ++run) {
    REQUIRE(evaluate(g.model(), {{"A", a}}, opts).at("Y").to_f64() ==
            std::vector<double>{21, 43, 65, 2100, 4300, 6500});
    CHECK(cache.prepared.size() == 1);
  }
  bnorm::EvalCache other;
  opts.cache = &other;
  for (double v : {1.0, 2.0}) {
    const Tensor b = Tensor::from_f64(DType::float32, {3, 2}, {v, v, v, v, v, v});
    REQUIRE(evaluate(g.model(), {{"A", a}, {"B", b}}, opts).at("Y").to_f64() ==
            std::vector<double>{11 * v, 11 * v, 11 * v, 1100 * v, 1100 * v, 1100 * v});
    CHECK(other.prepared.empty());
  }
}


TEST_CASE("runs sharing an EvalCache pack a Conv's weights for small maps and give the bits of the usual product",
          "[eval][cache][conv]") {
  // 64 channels at 7 x 7 (49 positions): the product runs transposed with
  // the weights packed once (conv.cpp, transposed_product). 3 x 3 padded
  // (im2col in chunks of rows: K = 576), 1 x 1 (X itself), 1 x 1 at stride
  // 2; then a BatchNormalization and Relu the Conv applies. Checked
  // against the same model run without a cache (the usual product) bit for
  // bit, and the plain Conv against a float64 sum within its error bound.
  struct Case {
    const char* name;
    std::vector<int64_t> w;
    int64_t stride, pad, in;
  };
  const Case cc = GENERATE(Case{"3x3", {64, 64, 3, 3}, 1, 1, 7}, Case{"1x1", {64, 32, 1, 1}, 1, 0, 7},
                           Case{"1x1 stride 2", {96, 32, 1, 1}, 2, 0, 13});
  const bool bn = GENERATE(false, true);
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(cc.name << (bn ? " -> BN, Relu " : " ") << bnorm::dtype_name(t));
  GraphBuilder g(15);
  const int64_t c = cc.w[1], m = cc.w[0];
  g.input("X", t, {2, c, cc.in, cc.in});
  const Tensor w = random_tensor(t, cc.w, 1), bias = random_tensor(t, {m}, 2);
  g.initializer("W", w);
  g.initializer("B", bias);
  auto& conv = g.node("Conv", {"X", "W", "B"}, {bn ? "C" : "Y"});
  bnorm::test::set_ints(conv, "strides", {cc.stride, cc.stride});
  bnorm::test::set_ints(conv, "pads", {cc.pad, cc.pad, cc.pad, cc.pad});
  if (bn) {
    g.initializer("scale", random_tensor(t, {m}, 3));
    g.initializer("shift", random_tensor(t, {m}, 4));
    g.initializer("mean", random_tensor(t, {m}, 5));
    std::vector<double> var(static_cast<size_t>(m), 0.5);
    g.initializer("var", Tensor::from_f64(t, {m}, var));
    g.node("BatchNormalization", {"C", "scale", "shift", "mean", "var"}, {"N"});
    g.node("Relu", {"N"}, {"Y"});
  }
  g.output("Y");
  const Tensor x = random_tensor(t, {2, c, cc.in, cc.in}, 6);
  const Tensor usual = evaluate(g.model(), {{"X", x}}, {}).at("Y");
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  for (int run = 0; run < 2; ++run) {
    INFO("run " << run + 1);
    const Tensor got = evaluate(g.model(), {{"X", x}}, opts).at("Y");
    CHECK(cache.prepared.size() == 1);
    REQUIRE(got.dims == usual.dims);
    REQUIRE(got.bytes == usual.bytes);
  }
  if (bn) return;
  // Y[i, o, y, x] = B[o] + sum over (ci, ky, kx) of W * X (0 in the padding), in float64.
  const std::vector<double> xv = x.to_f64(), wv = w.to_f64(), bv = bias.to_f64(), yv = usual.to_f64();
  const int64_t kh = cc.w[2], out = usual.dims[2];
  const double unit = t == DType::float32 ? 0x1p-24 : 0x1p-53;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t oy = 0; oy < out; ++oy)
        for (int64_t ox = 0; ox < out; ++ox) {
          double sum = 0, mag = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kh; ++kx) {
                const int64_t iy = oy * cc.stride - cc.pad + ky, ix = ox * cc.stride - cc.pad + kx;
                if (iy < 0 || ix < 0 || iy >= cc.in || ix >= cc.in) continue;
                const double p = wv[static_cast<size_t>(((o * c + ci) * kh + ky) * kh + kx)] *
                                 xv[static_cast<size_t>(((i * c + ci) * cc.in + iy) * cc.in + ix)];
                sum += p;
                mag += std::fabs(p);
              }
          const double want = sum + bv[static_cast<size_t>(o)];
          const double got = yv[static_cast<size_t>(((i * m + o) * out + oy) * out + ox)];
          REQUIRE(std::fabs(got - want) <= 1.01 * static_cast<double>(c * kh * kh + 1) * unit * (mag + std::fabs(bv[static_cast<size_t>(o)])) + 1e-300);
        }
}
