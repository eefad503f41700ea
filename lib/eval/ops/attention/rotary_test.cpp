// RotaryEmbedding-23 through bnorm::evaluate: hand-computed rotations and
// random cases against a float64 reference that follows the Changelog's
// algorithm step by step (to (B, S, H, D), caches gathered by position,
// halves or even/odd pairs, rotation, back to the input's layout).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

Tensor rope(const std::vector<Tensor>& inputs, const Attrs& attrs = {}, int64_t opset = 23) {
  return run_node(opset, "RotaryEmbedding", inputs, {"y"}, attrs)[0];
}

struct RopeArgs {
  Tensor x, cos, sin, pos;  // pos undefined: caches are (B, S, R/2)
  int64_t num_heads = 0, rot = 0;
  bool interleaved = false;
};

std::vector<double> reference(const RopeArgs& a) {
  const std::vector<double> x = a.x.to_f64(), c = a.cos.to_f64(), s = a.sin.to_f64();
  const bool three = a.x.dims.size() == 3;
  const int64_t B = a.x.dims[0], S = three ? a.x.dims[1] : a.x.dims[2];
  const int64_t H = three ? a.num_heads : a.x.dims[1], D = three ? a.x.dims[2] / H : a.x.dims[3];
  const int64_t R = a.rot ? a.rot : D, half = R / 2;
  // (B, S, H, D) view of the input, and its offset in the input's layout.
  const auto off = [&](int64_t b, int64_t t, int64_t h) {
    return three ? ((b * S + t) * H + h) * D : ((b * H + h) * S + t) * D;
  };
  const std::vector<double> p = a.pos.dtype != DType::undefined ? a.pos.to_f64() : std::vector<double>{};
  std::vector<double> y = x;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t) {
      const int64_t row = p.empty() ? b * S + t : static_cast<int64_t>(p[b * S + t]);
      for (int64_t h = 0; h < H; ++h) {
        std::vector<double> x1, x2;
        for (int64_t k = 0; k < R; ++k) {
          const bool first = a.interleaved ? k % 2 == 0 : k < half;
          (first ? x1 : x2).push_back(x[off(b, t, h) + k]);
        }
        for (int64_t k = 0; k < half; ++k) {
          const double real = c[row * half + k] * x1[k] - s[row * half + k] * x2[k];
          const double imag = s[row * half + k] * x1[k] + c[row * half + k] * x2[k];
          y[off(b, t, h) + (a.interleaved ? 2 * k : k)] = real;
          y[off(b, t, h) + (a.interleaved ? 2 * k + 1 : k + half)] = imag;
        }
      }
    }
  return y;
}

void check_against_reference(const RopeArgs& a) {
  std::vector<Tensor> in{a.x, a.cos, a.sin};
  if (a.pos.dtype != DType::undefined) in.push_back(a.pos);
  const Tensor got = rope(in, [&](onnx::NodeProto& n) {
    if (a.num_heads) set_attr(n, "num_heads", a.num_heads);
    if (a.rot) set_attr(n, "rotary_embedding_dim", a.rot);
    if (a.interleaved) set_attr(n, "interleaved", int64_t{1});
  });
  REQUIRE(got.dims == a.x.dims);
  REQUIRE(got.dtype == a.x.dtype);
  const std::vector<double> g = got.to_f64(), w = Tensor::from_f64(a.x.dtype, a.x.dims, reference(a)).to_f64();
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(w[i]).epsilon(1e-6).margin(1e-7));
}

}  // namespace

TEST_CASE("RotaryEmbedding rotates halves, or even/odd pairs when interleaved: hand-computed", "[eval][attention]") {
  // One head of 4 at position 0 with cos (0, 1), sin (1, 0): pair 0 turns a
  // quarter, pair 1 stays.
  const Tensor x = f32({1, 1, 1, 4}, {1, 2, 3, 4}), c = f32({1, 2}, {0, 1}), s = f32({1, 2}, {1, 0});
  const Tensor p = i64({1, 1}, {0});
  // halves: pairs (x0, x2) and (x1, x3); (1, 3) -> (-3, 1).
  CHECK(rope({x, c, s, p}).to_f64() == std::vector<double>{-3, 2, 1, 4});
  // interleaved: pairs (x0, x1) and (x2, x3); (1, 2) -> (-2, 1).
  const auto inter = [](onnx::NodeProto& n) { set_attr(n, "interleaved", int64_t{1}); };
  CHECK(rope({x, c, s, p}, inter).to_f64() == std::vector<double>{-2, 1, 3, 4});
  // rotary_embedding_dim 2: only (x0, x1) rotate, x2 and x3 pass through.
  const Tensor c1 = f32({1, 1}, {0}), s1 = f32({1, 1}, {1});
  CHECK(rope({x, c1, s1, p}, [](auto& n) { set_attr(n, "rotary_embedding_dim", int64_t{2}); }).to_f64() ==
        std::vector<double>{-2, 1, 3, 4});
}

TEST_CASE("RotaryEmbedding picks cache rows by position_ids, or per (batch, position) without them",
          "[eval][attention]") {
  uint32_t seed = 1;
  for (bool interleaved : {false, true}) {
    for (int64_t rot : {int64_t{0}, int64_t{4}}) {
      RopeArgs a;
      a.x = random_tensor(DType::float32, {2, 3, 4, 6}, seed++);
      const int64_t half = (rot ? rot : 6) / 2;
      a.cos = random_tensor(DType::float32, {10, half}, seed++);
      a.sin = random_tensor(DType::float32, {10, half}, seed++);
      a.pos = i64({2, 4}, {9, 0, 3, 3, 1, 2, 8, 5});
      a.rot = rot;
      a.interleaved = interleaved;
      check_against_reference(a);
      a.pos = Tensor();
      a.cos = random_tensor(DType::float32, {2, 4, half}, seed++);
      a.sin = random_tensor(DType::float32, {2, 4, half}, seed++);
      check_against_reference(a);
    }
  }
}

TEST_CASE("RotaryEmbedding reads a 3-D input as (batch, sequence, num_heads * head size)", "[eval][attention]") {
  RopeArgs a;
  a.x = random_tensor(DType::float32, {2, 3, 12}, 41);
  a.cos = random_tensor(DType::float32, {5, 2}, 42);
  a.sin = random_tensor(DType::float32, {5, 2}, 43);
  a.pos = i64({2, 3}, {0, 1, 2, 4, 3, 2});
  a.num_heads = 3;
  check_against_reference(a);
  a.interleaved = true;
  check_against_reference(a);
}

TEST_CASE("RotaryEmbedding computes float16 and bfloat16 in float64 and rounds once", "[eval][attention]") {
  for (DType t : {DType::float16, DType::bfloat16}) {
    RopeArgs a;
    a.x = random_tensor(t, {1, 2, 3, 8}, 51);
    a.cos = random_tensor(t, {1, 3, 4}, 52);
    a.sin = random_tensor(t, {1, 3, 4}, 53);
    check_against_reference(a);
  }
}

TEST_CASE("RotaryEmbedding keeps an empty input empty", "[eval][attention]") {
  const Tensor y = rope({f32({0, 2, 3, 4}, {}), f32({0, 3, 2}, {}), f32({0, 3, 2}, {})});
  CHECK(y.dims == std::vector<int64_t>{0, 2, 3, 4});
}

TEST_CASE("RotaryEmbedding refuses invalid nodes and versions before 23", "[eval][attention]") {
  const Tensor x = f32({1, 1, 2, 4}, std::vector<double>(8, 1)), c = f32({3, 2}, std::vector<double>(6, 1));
  const Tensor p = i64({1, 2}, {0, 2});
  const auto expect_error = [](const std::vector<Tensor>& in, const Attrs& attrs = {}, int64_t opset = 23) {
    REQUIRE_THROWS_AS(rope(in, attrs, opset), bnorm::Error);
  };
  CHECK(rope({x, c, c, p}).dims == x.dims);
  expect_error({x, c, c, p}, {}, 22);
  expect_error({x, c, c, i64({1, 2}, {0, 3})});   // position past the cache
  expect_error({x, c, c, i64({1, 2}, {0, -1})});  // negative position
  expect_error({x, c, c, i64({2, 1}, {0, 1})});   // position_ids shape
  expect_error({x, c, c});                        // 2-D caches need position_ids
  expect_error({x, f32({3, 3}, std::vector<double>(9, 1)), f32({3, 3}, std::vector<double>(9, 1)), p});
  expect_error({x, c, c, p}, [](auto& n) { set_attr(n, "rotary_embedding_dim", int64_t{3}); });
  expect_error({x, c, c, p}, [](auto& n) { set_attr(n, "rotary_embedding_dim", int64_t{6}); });
  expect_error({f32({1, 2, 8}, std::vector<double>(16, 1)), c, c, p});  // 3-D without num_heads
  expect_error({f32({1, 2, 8}, std::vector<double>(16, 1)), c, c, p},
               [](auto& n) { set_attr(n, "num_heads", int64_t{3}); });
  expect_error({f32({1, 1, 2, 3}, std::vector<double>(6, 1)), c, c, p});  // odd head size
  const Tensor x64 = Tensor::from_f64(DType::float64, {1, 1, 2, 4}, std::vector<double>(8, 1));
  const Tensor c64 = Tensor::from_f64(DType::float64, {3, 2}, std::vector<double>(6, 1));
  expect_error({x64, c64, c64, p});  // double is not a type of RotaryEmbedding-23
  expect_error({x, Tensor::from_f64(DType::float16, {3, 2}, std::vector<double>(6, 1)), c, p});
}
