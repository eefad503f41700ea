// TopK, ArgMax, ArgMin and Unique at each of their versions, against
// hand-computed cases and a brute-force top-k written from the spec.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

std::vector<int64_t> as_ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (double d : t.to_f64()) v.push_back(static_cast<int64_t>(d));
  return v;
}

}  // namespace

TEST_CASE("TopK takes k from the attribute at 1 and from input K at 10 and 11", "[eval][indexing]") {
  const Tensor x = f32({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  const auto v1 = run_node(1, "TopK", {x}, 2, int_attrs({{"k", 2}}));
  CHECK(v1[0].dims == std::vector<int64_t>{2, 2});
  CHECK(v1[0].to_f64() == V{4, 3, 9, 6});
  CHECK(as_ints(v1[1]) == std::vector<int64_t>{2, 0, 1, 3});
  REQUIRE_THROWS_AS(run_node(10, "TopK", {x, i64({1}, {3})}, 2, int_attrs({{"axis", 0}})), bnorm::Error);  // 3 > 2 rows
  const auto col = run_node(10, "TopK", {x, i64({1}, {1})}, 2, int_attrs({{"axis", 0}}));
  CHECK(col[0].to_f64() == V{5, 9, 4, 6});
  CHECK(as_ints(col[1]) == std::vector<int64_t>{1, 1, 0, 1});
  REQUIRE_THROWS_AS(run_node(1, "TopK", {x}, 2), bnorm::Error);  // k missing
  REQUIRE_THROWS_AS(run_node(11, "TopK", {x, i64({1}, {-1})}, 2), bnorm::Error);
}

TEST_CASE("TopK-11 returns the smallest on request, ties by lower index, against a brute-force reference",
          "[eval][indexing]") {
  // Values with many ties along the last axis of a [3, 7].
  V xs;
  for (int i = 0; i < 21; ++i) xs.push_back(static_cast<double>((i * 5) % 4));
  const Tensor x = f32({3, 7}, xs);
  for (int largest = 0; largest <= 1; ++largest) {
    const auto got = run_node(11, "TopK", {x, i64({1}, {4})}, 2, int_attrs({{"largest", largest}}));
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
  REQUIRE_THROWS_AS(run_node(10, "TopK", {x, i64({1}, {4})}, 2, int_attrs({{"largest", 0}})), bnorm::Error);
}

TEST_CASE("TopK takes integers from version 11 only and ranks NaN above every number", "[eval][indexing]") {
  const Tensor u = tensor_of(DType::uint64, {3}, {7, 18446744073709549568.0, 3});
  const auto got = run_node(11, "TopK", {u, i64({1}, {2})}, 2);
  CHECK(got[0].dtype == DType::uint64);
  CHECK(got[0].data<uint64_t>()[0] == 18446744073709549568ull);
  CHECK(as_ints(got[1]) == std::vector<int64_t>{1, 0});
  REQUIRE_THROWS_AS(run_node(10, "TopK", {u, i64({1}, {2})}, 2), bnorm::Error);
  const double nan = std::nan("");
  const auto n = run_node(11, "TopK", {f32({3}, {1, nan, 2}), i64({1}, {2})}, 2);
  CHECK(as_ints(n[1]) == std::vector<int64_t>{1, 2});
  const auto s = run_node(11, "TopK", {f32({3}, {1, nan, 2}), i64({1}, {2})}, 2, int_attrs({{"largest", 0}}));
  CHECK(as_ints(s[1]) == std::vector<int64_t>{0, 2});
}

TEST_CASE("ArgMax and ArgMin keep or drop the axis and take the first extreme, the last from 12 on request",
          "[eval][indexing]") {
  const Tensor x = f32({2, 3}, {2, 5, 5, 1, 1, 0});
  const Tensor a = run_node(1, "ArgMax", {x}, 1, int_attrs({{"axis", 1}}))[0];
  CHECK(a.dims == std::vector<int64_t>{2, 1});
  CHECK(as_ints(a) == std::vector<int64_t>{1, 0});
  const Tensor b = run_node(11, "ArgMin", {x}, 1, int_attrs({{"axis", -1}, {"keepdims", 0}}))[0];
  CHECK(b.dims == std::vector<int64_t>{2});
  CHECK(as_ints(b) == std::vector<int64_t>{0, 2});
  CHECK(as_ints(run_node(12, "ArgMax", {x}, 1, int_attrs({{"axis", 1}, {"select_last_index", 1}}))[0]) ==
        std::vector<int64_t>{2, 1});
  CHECK(as_ints(run_node(13, "ArgMin", {x}, 1, int_attrs({{"axis", 0}, {"select_last_index", 1}}))[0]) ==
        std::vector<int64_t>{1, 1, 1});
  REQUIRE_THROWS_AS(run_node(11, "ArgMax", {x}, 1, int_attrs({{"select_last_index", 1}})), bnorm::Error);
  REQUIRE_THROWS_AS(run_node(13, "ArgMax", {f32({0, 2}, {})}, 1), bnorm::Error);
  REQUIRE_THROWS_AS(run_node(13, "ArgMax", {x}, 1, int_attrs({{"axis", 2}})), bnorm::Error);
  const Tensor bf = tensor_of(DType::bfloat16, {3}, {1, 3, 2});
  REQUIRE_THROWS_AS(run_node(12, "ArgMax", {bf}, 1), bnorm::Error);
  CHECK(as_ints(run_node(13, "ArgMax", {bf}, 1)[0]) == std::vector<int64_t>{1});
  // Integers compare exactly: int64 values 2^53 and 2^53 + 1 differ.
  const Tensor big = tensor_of(DType::int64, {2}, {9007199254740992.0, 0});
  Tensor big2 = big;
  big2.data<int64_t>()[1] = big.data<int64_t>()[0] + 1;
  CHECK(as_ints(run_node(13, "ArgMax", {big2}, 1)[0]) == std::vector<int64_t>{1});
  // NaN wins both, as numpy's argmax and argmin.
  const double nan = std::nan("");
  CHECK(as_ints(run_node(13, "ArgMin", {f32({3}, {1, nan, 0})}, 1)[0]) == std::vector<int64_t>{1});
  CHECK(as_ints(run_node(13, "ArgMax", {f32({3}, {1, nan, 9})}, 1)[0]) == std::vector<int64_t>{1});
}

TEST_CASE("Unique gives the values, first indices, inverse map and counts, sorted or in order of appearance",
          "[eval][indexing]") {
  const Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
  // The spec's example 1 (unsorted).
  const auto u = run_node(11, "Unique", {x}, 4, int_attrs({{"sorted", 0}}));
  CHECK(u[0].to_f64() == V{2, 1, 3, 4});
  CHECK(as_ints(u[1]) == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(as_ints(u[2]) == std::vector<int64_t>{0, 1, 1, 2, 3, 2});
  CHECK(as_ints(u[3]) == std::vector<int64_t>{1, 2, 2, 1});
  const auto s = run_node(11, "Unique", {x}, 4);
  CHECK(s[0].to_f64() == V{1, 2, 3, 4});
  CHECK(as_ints(s[1]) == std::vector<int64_t>{1, 0, 3, 4});
  CHECK(as_ints(s[2]) == std::vector<int64_t>{1, 0, 0, 2, 3, 2});
  CHECK(as_ints(s[3]) == std::vector<int64_t>{2, 1, 2, 1});
  // The spec's example 4: slices along axis 1 of a [2, 4, 2].
  const Tensor x4 = f32({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  const auto a = run_node(11, "Unique", {x4}, 4, int_attrs({{"axis", 1}}));
  CHECK(a[0].dims == std::vector<int64_t>{2, 3, 2});
  CHECK(a[0].to_f64() == V{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1});
  CHECK(as_ints(a[1]) == std::vector<int64_t>{1, 0, 2});
  CHECK(as_ints(a[2]) == std::vector<int64_t>{1, 0, 2, 0});
  CHECK(as_ints(a[3]) == std::vector<int64_t>{2, 1, 1});
  const auto neg = run_node(11, "Unique", {x4}, 1, int_attrs({{"axis", -2}, {"sorted", 0}}));
  CHECK(neg[0].to_f64() == V{1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1});
  // NaNs collapse into one, sorted last; empty input gives empty outputs.
  const double nan = std::nan("");
  const auto n = run_node(11, "Unique", {f32({4}, {nan, 1, nan, -0.0})}, 4);
  CHECK(n[0].numel() == 3);
  CHECK(std::isnan(n[0].to_f64()[2]));
  CHECK(as_ints(n[3]) == std::vector<int64_t>{1, 1, 2});
  CHECK(run_node(11, "Unique", {f32({0}, {})}, 1)[0].numel() == 0);
  REQUIRE_THROWS_AS(run_node(11, "Unique", {x}, 1, int_attrs({{"sorted", 2}})), bnorm::Error);
  REQUIRE_THROWS_AS(run_node(11, "Unique", {x}, 1, int_attrs({{"axis", 1}})), bnorm::Error);
}

TEST_CASE("TopK-24 also takes bfloat16, TopK-11 does not", "[eval][indexing]") {
  const Tensor x = tensor_of(DType::bfloat16, {5}, {3, 1, 4, 1, 5});
  const auto top = run_node(24, "TopK", {x, i64({1}, {2})}, 2);
  CHECK(top[0].dtype == DType::bfloat16);
  CHECK(top[0].to_f64() == V{5, 4});
  CHECK(as_ints(top[1]) == std::vector<int64_t>{4, 2});
  const auto low = run_node(28, "TopK", {x, i64({1}, {3})}, 2, int_attrs({{"largest", 0}}));
  CHECK(low[0].to_f64() == V{1, 1, 3});
  CHECK(as_ints(low[1]) == std::vector<int64_t>{1, 3, 0});  // ties: the lower index first
  REQUIRE_THROWS_AS(run_node(23, "TopK", {x, i64({1}, {2})}, 2), bnorm::Error);
}
