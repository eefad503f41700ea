// Hardmax, Det and Einsum (matrix.cpp, einsum.cpp).
// Expected values are worked out by hand or by plain loops written here
// from the spec's definitions.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;
using Dims = std::vector<int64_t>;

Tensor t(DType type, Dims dims, const V& v) { return Tensor::from_f64(type, std::move(dims), v); }

// 1, 2, ..., n, with every third value negated, as double of shape dims.
Tensor seq(Dims dims) {
  V v(static_cast<size_t>(bnorm::checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 3 == 2 ? -1.0 : 1.0) * static_cast<double>(i + 1);
  return t(DType::float64, std::move(dims), v);
}

Attrs axis(int64_t a) {
  return [a](onnx::NodeProto& n) { set_attr(n, "axis", a); };
}

Tensor einsum(const std::string& eq, const std::vector<Tensor>& in) {
  return run_node1(12, "Einsum", in, [eq](onnx::NodeProto& n) { set_string(n, "equation", eq); });
}

}  // namespace

TEST_CASE("Hardmax-13 marks the first maximum along one axis", "[eval][unary]") {
  // [2, 3, 2]: along axis 1 each (i, k) column of three values.
  const Tensor x = t(DType::float32, {2, 3, 2}, {1, 5, 3, 5, 2, 0, -1, -2, -1, -3, -5, -2});
  CHECK(run_node1(13, "Hardmax", {x}, axis(1)).to_f64() == V{0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0});
  CHECK(run_node1(13, "Hardmax", {x}, axis(-2)).to_f64() == V{0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0});
  // Default axis -1: pairs.
  CHECK(run_node1(13, "Hardmax", {x}).to_f64() == V{0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(run_node1(13, "Hardmax", {t(DType::float64, {4}, {1, nan, 9, nan})}).to_f64() == V{0, 1, 0, 0});
  CHECK(run_node1(13, "Hardmax", {t(DType::float16, {0, 3}, {})}).dims == Dims{0, 3});
  CHECK_THROWS_AS(run_node1(13, "Hardmax", {x}, axis(3)), bnorm::Error);
  CHECK_THROWS_AS(run_node1(13, "Hardmax", {t(DType::int32, {2}, {1, 2})}), bnorm::Error);
}

TEST_CASE("Hardmax-1 and 11 flatten the input to a matrix at axis (default 1)", "[eval][unary]") {
  const Tensor x = t(DType::float32, {2, 2, 2}, {1, 5, 7, 2, 4, 4, 0, 3});
  for (int opset : {1, 11, 12}) {
    CHECK(run_node1(opset, "Hardmax", {x}).to_f64() == V{0, 0, 1, 0, 1, 0, 0, 0});
    CHECK(run_node1(opset, "Hardmax", {x}, axis(0)).to_f64() == V{0, 0, 1, 0, 0, 0, 0, 0});
    CHECK(run_node1(opset, "Hardmax", {x}, axis(2)).to_f64() == V{0, 1, 1, 0, 1, 0, 0, 1});
  }
  // Negative axes count from the back from 11 on; version 1 does not define them.
  CHECK(run_node1(11, "Hardmax", {x}, axis(-2)).to_f64() == V{0, 0, 1, 0, 1, 0, 0, 0});
  CHECK_THROWS_AS(run_node1(1, "Hardmax", {x}, axis(-2)), bnorm::Error);
}

TEST_CASE("Det of a batch of square matrices by pivoted elimination", "[eval][unary]") {
  // [[0, 2], [3, 4]] needs a row swap: -6. [[2, 1, 0], ...] worked by hand.
  CHECK(run_node1(11, "Det", {t(DType::float64, {2, 2}, {0, 2, 3, 4})}).to_f64() == V{-6});
  CHECK(run_node1(11, "Det", {t(DType::float64, {2, 2}, {0, 2, 3, 4})}).dims.empty());
  const Tensor batch = t(DType::float64, {2, 3, 3}, {2, 1, 0, 1, 3, 1, 0, 1, 4, 1, 2, 3, 2, 4, 6, 0, 1, 5});
  const V d = run_node1(22, "Det", {batch}).to_f64();
  REQUIRE(d.size() == 2);
  // 2 (12 - 1) - 1 (4 - 0) + 0 = 18; the second has row 2 = 2 row 1: 0.
  CHECK(std::fabs(d[0] - 18) < 1e-12);
  CHECK(d[1] == 0);
  const Tensor f = run_node1(11, "Det", {t(DType::float32, {3, 1, 1}, {2, -3, 0.5})});
  CHECK(f.dims == Dims{3});
  CHECK(f.to_f64() == V{2, -3, 0.5});
  CHECK(run_node1(11, "Det", {t(DType::float32, {0, 2, 2}, {})}).dims == Dims{0});
  CHECK(run_node1(11, "Det", {t(DType::float32, {2, 0, 0}, {})}).to_f64() == V{1, 1});
  CHECK_THROWS_AS(run_node1(11, "Det", {t(DType::float32, {2, 3}, {1, 2, 3, 4, 5, 6})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(11, "Det", {t(DType::float32, {2}, {1, 2})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(11, "Det", {t(DType::int32, {1, 1}, {1})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(10, "Det", {t(DType::float32, {1, 1}, {1})}), bnorm::Error);
}

TEST_CASE("Einsum contracts explicit and implicit equations: matmul, transpose, trace, sums", "[eval][unary]") {
  const Tensor a = seq({2, 3}), b = seq({3, 4});
  V mm(8, 0.0);
  const V va = a.to_f64(), vb = b.to_f64();
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 4; ++k) {
      for (int j = 0; j < 3; ++j) mm[i * 4 + k] += va[i * 3 + j] * vb[j * 4 + k];
    }
  }
  for (const char* eq : {"ij,jk->ik", "ij,jk", " i j , j k -> i k"}) {
    const Tensor c = einsum(eq, {a, b});
    CHECK(c.dims == Dims{2, 4});
    CHECK(c.to_f64() == mm);
  }
  // Implicit output in ASCII order: "ba" is a transpose, upper case first.
  CHECK(einsum("ba", {a}).to_f64() == V{1, 4, 2, 5, -3, -6});
  CHECK(einsum("aB", {a}).dims == Dims{3, 2});
  CHECK(einsum("ij->", {a}).to_f64() == V{1 + 2 - 3 + 4 + 5 - 6});
  CHECK(einsum("ij->j", {a}).to_f64() == V{5, 7, -9});
  const Tensor sq = seq({3, 3});  // 1 2 -3 / 4 5 -6 / 7 8 -9
  CHECK(einsum("ii", {sq}).to_f64() == V{1 + 5 - 9});
  CHECK(einsum("ii->i", {sq}).to_f64() == V{1, 5, -9});
  CHECK(einsum("i,i", {seq({3}), seq({3})}).to_f64() == V{1 + 4 + 9});
  CHECK(einsum("i,j->ij", {seq({2}), seq({2})}).to_f64() == V{1, 2, 2, 4});
  CHECK(einsum("->", {t(DType::float32, {}, {2.5})}).to_f64() == V{2.5});
  CHECK(einsum("i,i,i->", {seq({3}), seq({3}), seq({3})}).to_f64() == V{1 + 8 - 27});
}

TEST_CASE("Einsum ellipses batch, broadcast and take batched diagonals", "[eval][unary]") {
  const Tensor x = seq({2, 2, 2});  // 1 2 -3 4 5 -6 7 8
  CHECK(einsum("...ii->...i", {x}).to_f64() == V{1, 4, 5, 8});
  const Tensor m = einsum("bij,bjk->bik", {x, x});
  // [[1, 2], [-3, 4]]^2 = [[-5, 10], [-15, 10]]; [[5, -6], [7, 8]]^2 = [[-17, -78], [91, 22]].
  CHECK(m.to_f64() == V{-5, 10, -15, 10, -17, -78, 91, 22});
  CHECK(einsum("...ij,...jk", {x, x}).to_f64() == m.to_f64());
  // A [2, 2] right operand broadcasts over the batch of the left.
  const Tensor id = t(DType::float64, {2, 2}, {1, 0, 0, 1});
  CHECK(einsum("...ij,...jk->...ik", {x, id}).to_f64() == x.to_f64());
  // An explicit output without the ellipsis sums over it.
  CHECK(einsum("...i->i", {x}).to_f64() == V{1 - 3 + 5 + 7, 2 + 4 - 6 + 8});
  CHECK(einsum("...->...", {t(DType::float64, {1, 3}, {1, 2, 3})}).dims == Dims{1, 3});
}

TEST_CASE("Einsum keeps integer types exact and refuses malformed equations", "[eval][unary]") {
  Tensor big(DType::int64, {2});
  big.data<int64_t>()[0] = (int64_t{1} << 53) + 1;
  big.data<int64_t>()[1] = 3;
  const Tensor one = t(DType::int64, {2}, {1, 1});
  const Tensor s = einsum("i,i", {big, one});
  CHECK(s.dtype == DType::int64);
  CHECK(s.data<int64_t>()[0] == (int64_t{1} << 53) + 4);
  CHECK(einsum("ij->ji", {t(DType::uint8, {1, 2}, {200, 7})}).to_f64() == V{200, 7});
  CHECK(einsum("i,i", {t(DType::int8, {2}, {100, 100}), t(DType::int8, {2}, {1, 1})}).to_f64() == V{-56});
  const Tensor a = seq({2, 3});
  CHECK_THROWS_AS(einsum("ij,jk->ik", {a}), bnorm::Error);               // two terms, one input
  CHECK_THROWS_AS(einsum("ijk", {a}), bnorm::Error);                     // rank 2 for three letters
  CHECK_THROWS_AS(einsum("ij,ij", {a, seq({3, 2})}), bnorm::Error);      // i is 2 and 3
  CHECK_THROWS_AS(einsum("ij->iz", {a}), bnorm::Error);                  // z in no input
  CHECK_THROWS_AS(einsum("ij->ii", {a}), bnorm::Error);                  // repeated output label
  CHECK_THROWS_AS(einsum("i1", {a}), bnorm::Error);                      // no letter
  CHECK_THROWS_AS(einsum("..i", {a}), bnorm::Error);                     // broken ellipsis
  CHECK_THROWS_AS(einsum("ij,ij", {a, t(DType::float32, {2, 3}, {1, 2, 3, 4, 5, 6})}), bnorm::Error);
  CHECK_THROWS_AS(einsum("...ij,...jk", {seq({2, 2, 2}), seq({3, 2, 2})}), bnorm::Error);
  // 2 x 10^10 multiply-adds are refused before any work.
  CHECK_THROWS_AS(einsum("i,j->ij", {Tensor(DType::float32, {100000}), Tensor(DType::float32, {100000})}),
                  bnorm::Error);
  CHECK_THROWS_AS(run_node1(11, "Einsum", {a}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(12, "Einsum", {a}), bnorm::Error);  // no equation
}
