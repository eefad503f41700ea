// GatherElements, GatherND, Scatter, ScatterElements and ScatterND at each
// of their versions, against naive loops written from the spec's formulas
// and hand-computed cases.
#include <catch2/catch.hpp>

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

Attrs axis(int64_t a) {
  return [a](onnx::NodeProto& n) { set_attr(n, "axis", a); };
}

Attrs reduction(const std::string& r, int64_t a = 0) {
  return [r, a](onnx::NodeProto& n) {
    set_string(n, "reduction", r);
    set_attr(n, "axis", a);
  };
}
Tensor iota(std::vector<int64_t> dims, DType t = DType::float32) { return bnorm::test::iota(t, std::move(dims)); }

}  // namespace

TEST_CASE("GatherElements picks data[p with indices[p] on the axis], negative indices from the end",
          "[eval][indexing]") {
  const Tensor data = iota({3, 4, 2});
  // indices [2, 3, 2] on axis 1, some negative; expected by the spec's formula
  // out[i][j][k] = data[i][idx][k] with data[i][j][k] = i * 8 + j * 2 + k.
  const V idx{0, -1, 3, 2, -4, 1, 1, 1, 2, -2, 0, 3};
  const Tensor out = run_node1(13, "GatherElements", {data, i64({2, 3, 2}, idx)}, axis(-2));
  REQUIRE(out.dims == std::vector<int64_t>{2, 3, 2});
  V want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 2; ++k) {
        double p = idx[(i * 3 + j) * 2 + k];
        if (p < 0) p += 4;
        want.push_back(i * 8 + p * 2 + k);
      }
    }
  }
  CHECK(out.to_f64() == want);
  CHECK(run_node1(11, "GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})}, axis(1)).to_f64() ==
        V{1, 1, 4, 3});
}

TEST_CASE("GatherElements refuses out-of-range indices, a rank mismatch and bfloat16 before version 13",
          "[eval][indexing]") {
  REQUIRE_THROWS_AS(run_node1(13, "GatherElements", {iota({2, 2}), i64({2, 2}, {0, 2, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "GatherElements", {iota({2, 2}), i64({2, 2}, {0, -3, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "GatherElements", {iota({2, 2}), i64({4}, {0, 0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "GatherElements", {iota({2, 2}), i64({1, 3}, {0, 0, 0})}), bnorm::Error);
  const Tensor bf = iota({2, 2}, DType::bfloat16);
  REQUIRE_THROWS_AS(run_node1(11, "GatherElements", {bf, i64({1, 2}, {1, 0})}), bnorm::Error);
  const Tensor got = run_node1(13, "GatherElements", {bf, i64({1, 2}, {1, 0})});
  CHECK(got.dtype == DType::bfloat16);
  CHECK(got.to_f64() == V{2, 1});
}

TEST_CASE("GatherND gathers elements or slices by index tuples, and batch_dims from version 12",
          "[eval][indexing]") {
  const Tensor d = iota({2, 2, 2});
  // The spec's examples 3 and 4.
  CHECK(run_node1(11, "GatherND", {d, i64({2, 2}, {0, 1, 1, 0})}).to_f64() == V{2, 3, 4, 5});
  const Tensor e4 = run_node1(13, "GatherND", {d, i64({2, 1, 2}, {0, 1, 1, 0})});
  CHECK(e4.dims == std::vector<int64_t>{2, 1, 2});
  CHECK(e4.to_f64() == V{2, 3, 4, 5});
  // Full tuples give scalars; negative components count from the end.
  CHECK(run_node1(13, "GatherND", {d, i64({2, 3}, {-1, 0, 1, 0, -1, -2})}).to_f64() == V{5, 2});
  // batch_dims = 1: batch b gathers from d[b]: d[0][1] = [2, 3], d[1][0] = [4, 5].
  const auto batch = [](onnx::NodeProto& n) { set_attr(n, "batch_dims", int64_t{1}); };
  const Tensor b1 = run_node1(12, "GatherND", {d, i64({2, 1}, {1, 0})}, batch);
  CHECK(b1.dims == std::vector<int64_t>{2, 2});
  CHECK(b1.to_f64() == V{2, 3, 4, 5});
  REQUIRE_THROWS_AS(run_node1(11, "GatherND", {d, i64({2, 1}, {1, 0})}, batch), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "GatherND", {d, i64({2, 1}, {2, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "GatherND", {d, i64({1, 4}, {0, 0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "GatherND", {d, i64({3, 1}, {0, 0, 0})}, batch), bnorm::Error);
}

TEST_CASE("ScatterElements replaces at versions 11 and 13, and duplicate indices keep the last update",
          "[eval][indexing]") {
  // The spec's example 1.
  const Tensor data = f32({3, 3}, V(9, 0.0));
  const Tensor idx = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  const Tensor upd = f32({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2});
  const Tensor out = run_node1(11, "ScatterElements", {data, idx, upd});
  const V want{2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2};
  const V got = out.to_f64();
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-7));
  CHECK(run_node1(13, "ScatterElements", {f32({1, 3}, {0, 0, 0}), i64({1, 2}, {-1, 2}), f32({1, 2}, {5, 6})},
             axis(1))
            .to_f64() == V{0, 0, 6});
  REQUIRE_THROWS_AS(run_node1(13, "ScatterElements", {data, idx, upd}, reduction("add")), bnorm::Error);
}

TEST_CASE("ScatterElements reductions: add and mul from version 16, max and min from 18", "[eval][indexing]") {
  const Tensor data = f32({1, 4}, {1, 2, 3, 4});
  const Tensor idx = i64({1, 4}, {1, 1, 3, -1});
  const Tensor upd = f32({1, 4}, {10, 20, 0.5, 7});
  CHECK(run_node1(16, "ScatterElements", {data, idx, upd}, reduction("add", 1)).to_f64() == V{1, 32, 3, 11.5});
  CHECK(run_node1(16, "ScatterElements", {data, idx, upd}, reduction("mul", 1)).to_f64() == V{1, 400, 3, 14});
  CHECK(run_node1(18, "ScatterElements", {data, idx, upd}, reduction("max", 1)).to_f64() == V{1, 20, 3, 7});
  CHECK(run_node1(18, "ScatterElements", {data, idx, upd}, reduction("min", 1)).to_f64() == V{1, 2, 3, 0.5});
  REQUIRE_THROWS_AS(run_node1(16, "ScatterElements", {data, idx, upd}, reduction("max", 1)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(18, "ScatterElements", {data, idx, upd}, reduction("sum", 1)), bnorm::Error);
  // Integers wrap as numpy does: int8 100 + 100 = -56.
  const Tensor i8 = run_node1(16, "ScatterElements",
                         {tensor_of(DType::int8, {2}, {100, 1}), i64({1}, {0}), tensor_of(DType::int8, {1}, {100})},
                         reduction("add"));
  CHECK(i8.to_f64() == V{-56, 1});
  // max propagates NaN as numpy's maximum.
  const double nan = std::nan("");
  CHECK(std::isnan(run_node1(18, "ScatterElements", {f32({2}, {1, 2}), i64({1}, {1}), f32({1}, {nan})},
                        reduction("max"))
                       .to_f64()[1]));
  // bool: add is or, mul is and.
  const Tensor bools = tensor_of(DType::boolean, {2}, {1, 0});
  CHECK(run_node1(16, "ScatterElements", {bools, i64({2}, {0, 1}), tensor_of(DType::boolean, {2}, {0, 0})}, reduction("add"))
            .to_f64() == V{1, 0});
  CHECK(run_node1(16, "ScatterElements", {bools, i64({2}, {0, 1}), tensor_of(DType::boolean, {2}, {0, 1})}, reduction("mul"))
            .to_f64() == V{0, 0});
}

TEST_CASE("Scatter-9 replaces like ScatterElements but refuses negative indices, it is gone at 11",
          "[eval][indexing]") {
  // The spec's example 2.
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  const Tensor upd = f32({1, 2}, {1.5, 2.5});
  CHECK(run_node1(9, "Scatter", {data, i64({1, 2}, {1, 3}), upd}, axis(1)).to_f64() == V{1, 1.5, 3, 2.5, 5});
  CHECK(run_node1(10, "Scatter", {data, i64({1, 2}, {1, 3}), upd}, axis(-1)).to_f64() == V{1, 1.5, 3, 2.5, 5});
  REQUIRE_THROWS_AS(run_node1(9, "Scatter", {data, i64({1, 2}, {-1, 3}), upd}, axis(1)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "Scatter", {data, i64({1, 2}, {1, 3}), upd}, axis(1)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "Scatter", {data, i64({1, 2}, {1, 5}), upd}, axis(1)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "Scatter", {data, i64({1, 2}, {1, 3}), f32({1, 3}, {1, 2, 3})}, axis(1)),
                    bnorm::Error);
}

TEST_CASE("ScatterND writes elements or slices, applying its reductions in index order", "[eval][indexing]") {
  // The spec's example 1.
  const Tensor data = iota({8});
  const Tensor idx = i64({4, 1}, {4, 3, 1, 7});
  const Tensor upd = f32({4}, {9, 10, 11, 12});
  CHECK(run_node1(11, "ScatterND", {data, idx, upd}).to_f64() == V{0, 11, 2, 10, 9, 5, 6, 12});
  // Slices of a [2, 3]: row -1 (= 1) takes [7, 8, 9].
  CHECK(run_node1(13, "ScatterND", {iota({2, 3}), i64({1, 1}, {-1}), f32({1, 3}, {7, 8, 9})}).to_f64() ==
        V{0, 1, 2, 7, 8, 9});
  const auto red = [](const std::string& r) { return [r](onnx::NodeProto& n) { set_string(n, "reduction", r); }; };
  const Tensor dup = i64({3, 1}, {1, 1, 0});
  const Tensor u3 = f32({3}, {2, 3, 5});
  CHECK(run_node1(16, "ScatterND", {f32({2}, {1, 1}), dup, u3}, red("add")).to_f64() == V{6, 6});
  CHECK(run_node1(16, "ScatterND", {f32({2}, {1, 1}), dup, u3}, red("mul")).to_f64() == V{5, 6});
  CHECK(run_node1(18, "ScatterND", {f32({2}, {1, 4}), dup, u3}, red("max")).to_f64() == V{5, 4});
  CHECK(run_node1(18, "ScatterND", {f32({2}, {1, 4}), dup, u3}, red("min")).to_f64() == V{1, 2});
  CHECK(run_node1(18, "ScatterND", {f32({2}, {1, 4}), dup, u3}).to_f64() == V{5, 3});
  REQUIRE_THROWS_AS(run_node1(13, "ScatterND", {f32({2}, {1, 1}), dup, u3}, red("add")), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(16, "ScatterND", {f32({2}, {1, 1}), dup, u3}, red("min")), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(18, "ScatterND", {f32({2}, {1, 1}), i64({1, 1}, {2}), f32({1}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(18, "ScatterND", {f32({2}, {1, 1}), dup, f32({2}, {0, 0})}), bnorm::Error);
}
