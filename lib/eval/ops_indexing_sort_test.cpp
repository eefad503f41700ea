// TopK, ArgMax, ArgMin and Unique at each of their versions, against
// hand-computed cases and a brute-force top-k written from the spec.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "core/error.h"
#include "eval/evaluator.h"
#include "eval/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;

using Attrs = std::function<void(onnx::NodeProto&)>;
using V = std::vector<double>;

Tensor make(DType t, std::vector<int64_t> dims, const V& v) { return Tensor::from_f64(t, std::move(dims), v); }
Tensor ints(std::vector<int64_t> dims, const V& v) { return make(DType::int64, std::move(dims), v); }
Tensor floats(std::vector<int64_t> dims, const V& v) { return make(DType::float32, std::move(dims), v); }

std::vector<Tensor> run(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs, int outputs,
                        const Attrs& attrs = {}) {
  GraphBuilder b(opset);
  std::vector<std::string> in, out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back("in" + std::to_string(i));
    b.initializer(in.back(), inputs[i]);
  }
  for (int i = 0; i < outputs; ++i) out.push_back("out" + std::to_string(i));
  auto& n = b.node(op, in, out, "n");
  if (attrs) attrs(n);
  for (const auto& o : out) b.output(o);
  const auto r = bnorm::evaluate(b.model(), {});
  std::vector<Tensor> got;
  for (const auto& o : out) got.push_back(r.at(o));
  return got;
}

Attrs with(std::vector<std::pair<std::string, int64_t>> kv) {
  return [kv](onnx::NodeProto& n) {
    for (const auto& [k, v] : kv) set_attr(n, k, v);
  };
}

std::vector<int64_t> as_ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (double d : t.to_f64()) v.push_back(static_cast<int64_t>(d));
  return v;
}

}  // namespace

TEST_CASE("TopK takes k from the attribute at 1 and from input K at 10 and 11", "[eval][indexing]") {
  const Tensor x = floats({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  const auto v1 = run(1, "TopK", {x}, 2, with({{"k", 2}}));
  CHECK(v1[0].dims == std::vector<int64_t>{2, 2});
  CHECK(v1[0].to_f64() == V{4, 3, 9, 6});
  CHECK(as_ints(v1[1]) == std::vector<int64_t>{2, 0, 1, 3});
  REQUIRE_THROWS_AS(run(10, "TopK", {x, ints({1}, {3})}, 2, with({{"axis", 0}})), bnorm::Error);  // 3 > 2 rows
  const auto col = run(10, "TopK", {x, ints({1}, {1})}, 2, with({{"axis", 0}}));
  CHECK(col[0].to_f64() == V{5, 9, 4, 6});
  CHECK(as_ints(col[1]) == std::vector<int64_t>{1, 1, 0, 1});
  REQUIRE_THROWS_AS(run(1, "TopK", {x}, 2), bnorm::Error);  // k missing
  REQUIRE_THROWS_AS(run(11, "TopK", {x, ints({1}, {-1})}, 2), bnorm::Error);
}

TEST_CASE("TopK-11 returns the smallest on request, ties by lower index, against a brute-force reference",
          "[eval][indexing]") {
  // Values with many ties along the last axis of a [3, 7].
  V xs;
  for (int i = 0; i < 21; ++i) xs.push_back(static_cast<double>((i * 5) % 4));
  const Tensor x = floats({3, 7}, xs);
  for (int largest = 0; largest <= 1; ++largest) {
    const auto got = run(11, "TopK", {x, ints({1}, {4})}, 2, with({{"largest", largest}}));
    for (int r = 0; r < 3; ++r) {
      std::vector<int> idx{0, 1, 2, 3, 4, 5, 6};
      // Selection by repeated scan: the extreme value, first index among equals.
      for (int j = 0; j < 4; ++j) {
        int best = -1;
        for (int c : idx) {
          const double v = xs[r * 7 + c];
          if (best < 0 || (largest ? v > xs[r * 7 + best] : v < xs[r * 7 + best])) best = c;
        }
        CHECK(got[1].to_f64()[r * 4 + j] == best);
        CHECK(got[0].to_f64()[r * 4 + j] == xs[r * 7 + best]);
        idx.erase(std::find(idx.begin(), idx.end(), best));
      }
    }
  }
  REQUIRE_THROWS_AS(run(10, "TopK", {x, ints({1}, {4})}, 2, with({{"largest", 0}})), bnorm::Error);
}

TEST_CASE("TopK takes integers from version 11 only and ranks NaN above every number", "[eval][indexing]") {
  const Tensor u = make(DType::uint64, {3}, {7, 18446744073709549568.0, 3});
  const auto got = run(11, "TopK", {u, ints({1}, {2})}, 2);
  CHECK(got[0].dtype == DType::uint64);
  CHECK(got[0].data<uint64_t>()[0] == 18446744073709549568ull);
  CHECK(as_ints(got[1]) == std::vector<int64_t>{1, 0});
  REQUIRE_THROWS_AS(run(10, "TopK", {u, ints({1}, {2})}, 2), bnorm::Error);
  const double nan = std::nan("");
  const auto n = run(11, "TopK", {floats({3}, {1, nan, 2}), ints({1}, {2})}, 2);
  CHECK(as_ints(n[1]) == std::vector<int64_t>{1, 2});
  const auto s = run(11, "TopK", {floats({3}, {1, nan, 2}), ints({1}, {2})}, 2, with({{"largest", 0}}));
  CHECK(as_ints(s[1]) == std::vector<int64_t>{0, 2});
}

TEST_CASE("ArgMax and ArgMin keep or drop the axis and take the first extreme, the last from 12 on request",
          "[eval][indexing]") {
  const Tensor x = floats({2, 3}, {2, 5, 5, 1, 1, 0});
  const Tensor a = run(1, "ArgMax", {x}, 1, with({{"axis", 1}}))[0];
  CHECK(a.dims == std::vector<int64_t>{2, 1});
  CHECK(as_ints(a) == std::vector<int64_t>{1, 0});
  const Tensor b = run(11, "ArgMin", {x}, 1, with({{"axis", -1}, {"keepdims", 0}}))[0];
  CHECK(b.dims == std::vector<int64_t>{2});
  CHECK(as_ints(b) == std::vector<int64_t>{0, 2});
  CHECK(as_ints(run(12, "ArgMax", {x}, 1, with({{"axis", 1}, {"select_last_index", 1}}))[0]) ==
        std::vector<int64_t>{2, 1});
  CHECK(as_ints(run(13, "ArgMin", {x}, 1, with({{"axis", 0}, {"select_last_index", 1}}))[0]) ==
        std::vector<int64_t>{1, 1, 1});
  REQUIRE_THROWS_AS(run(11, "ArgMax", {x}, 1, with({{"select_last_index", 1}})), bnorm::Error);
  REQUIRE_THROWS_AS(run(13, "ArgMax", {floats({0, 2}, {})}, 1), bnorm::Error);
  REQUIRE_THROWS_AS(run(13, "ArgMax", {x}, 1, with({{"axis", 2}})), bnorm::Error);
  const Tensor bf = make(DType::bfloat16, {3}, {1, 3, 2});
  REQUIRE_THROWS_AS(run(12, "ArgMax", {bf}, 1), bnorm::Error);
  CHECK(as_ints(run(13, "ArgMax", {bf}, 1)[0]) == std::vector<int64_t>{1});
  // Integers compare exactly: int64 values 2^53 and 2^53 + 1 differ.
  const Tensor big = make(DType::int64, {2}, {9007199254740992.0, 0});
  Tensor big2 = big;
  big2.data<int64_t>()[1] = big.data<int64_t>()[0] + 1;
  CHECK(as_ints(run(13, "ArgMax", {big2}, 1)[0]) == std::vector<int64_t>{1});
  // NaN wins both, as numpy's argmax and argmin.
  const double nan = std::nan("");
  CHECK(as_ints(run(13, "ArgMin", {floats({3}, {1, nan, 0})}, 1)[0]) == std::vector<int64_t>{1});
  CHECK(as_ints(run(13, "ArgMax", {floats({3}, {1, nan, 9})}, 1)[0]) == std::vector<int64_t>{1});
}

TEST_CASE("Unique gives the values, first indices, inverse map and counts, sorted or in order of appearance",
          "[eval][indexing]") {
  const Tensor x = floats({6}, {2, 1, 1, 3, 4, 3});
  // The spec's example 1 (unsorted).
  const auto u = run(11, "Unique", {x}, 4, with({{"sorted", 0}}));
  CHECK(u[0].to_f64() == V{2, 1, 3, 4});
  CHECK(as_ints(u[1]) == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(as_ints(u[2]) == std::vector<int64_t>{0, 1, 1, 2, 3, 2});
  CHECK(as_ints(u[3]) == std::vector<int64_t>{1, 2, 2, 1});
  const auto s = run(11, "Unique", {x}, 4);
  CHECK(s[0].to_f64() == V{1, 2, 3, 4});
  CHECK(as_ints(s[1]) == std::vector<int64_t>{1, 0, 3, 4});
  CHECK(as_ints(s[2]) == std::vector<int64_t>{1, 0, 0, 2, 3, 2});
  CHECK(as_ints(s[3]) == std::vector<int64_t>{2, 1, 2, 1});
  // The spec's example 4: slices along axis 1 of a [2, 4, 2].
  const Tensor x4 = floats({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  const auto a = run(11, "Unique", {x4}, 4, with({{"axis", 1}}));
  CHECK(a[0].dims == std::vector<int64_t>{2, 3, 2});
  CHECK(a[0].to_f64() == V{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1});
  CHECK(as_ints(a[1]) == std::vector<int64_t>{1, 0, 2});
  CHECK(as_ints(a[2]) == std::vector<int64_t>{1, 0, 2, 0});
  CHECK(as_ints(a[3]) == std::vector<int64_t>{2, 1, 1});
  const auto neg = run(11, "Unique", {x4}, 1, with({{"axis", -2}, {"sorted", 0}}));
  CHECK(neg[0].to_f64() == V{1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1});
  // NaNs collapse into one, sorted last; empty input gives empty outputs.
  const double nan = std::nan("");
  const auto n = run(11, "Unique", {floats({4}, {nan, 1, nan, -0.0})}, 4);
  CHECK(n[0].numel() == 3);
  CHECK(std::isnan(n[0].to_f64()[2]));
  CHECK(as_ints(n[3]) == std::vector<int64_t>{1, 1, 2});
  CHECK(run(11, "Unique", {floats({0}, {})}, 1)[0].numel() == 0);
  REQUIRE_THROWS_AS(run(11, "Unique", {x}, 1, with({{"sorted", 2}})), bnorm::Error);
  REQUIRE_THROWS_AS(run(11, "Unique", {x}, 1, with({{"axis", 1}})), bnorm::Error);
}
