// GatherElements, GatherND, Scatter, ScatterElements and ScatterND at each
// of their versions, against naive loops written from the spec's formulas
// and hand-computed cases.
#include <catch2/catch.hpp>

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

void set_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

Tensor make(DType t, std::vector<int64_t> dims, const V& v) { return Tensor::from_f64(t, std::move(dims), v); }
Tensor ints(std::vector<int64_t> dims, const V& v) { return make(DType::int64, std::move(dims), v); }
Tensor floats(std::vector<int64_t> dims, const V& v) { return make(DType::float32, std::move(dims), v); }

Tensor iota(std::vector<int64_t> dims, DType t = DType::float32) {
  V v(static_cast<size_t>(bnorm::checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make(t, std::move(dims), v);
}

Tensor run1(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  GraphBuilder b(opset);
  std::vector<std::string> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back("in" + std::to_string(i));
    b.initializer(in.back(), inputs[i]);
  }
  auto& n = b.node(op, in, {"out"}, "n");
  if (attrs) attrs(n);
  b.output("out");
  return bnorm::evaluate(b.model(), {}).at("out");
}

Attrs axis(int64_t a) {
  return [a](onnx::NodeProto& n) { set_attr(n, "axis", a); };
}

Attrs reduction(const std::string& r, int64_t a = 0) {
  return [r, a](onnx::NodeProto& n) {
    set_string(n, "reduction", r);
    set_attr(n, "axis", a);
  };
}

}  // namespace

TEST_CASE("GatherElements picks data[p with indices[p] on the axis], negative indices from the end",
          "[eval][indexing]") {
  const Tensor data = iota({3, 4, 2});
  // indices [2, 3, 2] on axis 1, some negative; expected by the spec's formula
  // out[i][j][k] = data[i][idx][k] with data[i][j][k] = i * 8 + j * 2 + k.
  const V idx{0, -1, 3, 2, -4, 1, 1, 1, 2, -2, 0, 3};
  const Tensor out = run1(13, "GatherElements", {data, ints({2, 3, 2}, idx)}, axis(-2));
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
  CHECK(run1(11, "GatherElements", {floats({2, 2}, {1, 2, 3, 4}), ints({2, 2}, {0, 0, 1, 0})}, axis(1)).to_f64() ==
        V{1, 1, 4, 3});
}

TEST_CASE("GatherElements refuses out-of-range indices, a rank mismatch and bfloat16 before version 13",
          "[eval][indexing]") {
  REQUIRE_THROWS_AS(run1(13, "GatherElements", {iota({2, 2}), ints({2, 2}, {0, 2, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(13, "GatherElements", {iota({2, 2}), ints({2, 2}, {0, -3, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(13, "GatherElements", {iota({2, 2}), ints({4}, {0, 0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(13, "GatherElements", {iota({2, 2}), ints({1, 3}, {0, 0, 0})}), bnorm::Error);
  const Tensor bf = iota({2, 2}, DType::bfloat16);
  REQUIRE_THROWS_AS(run1(11, "GatherElements", {bf, ints({1, 2}, {1, 0})}), bnorm::Error);
  const Tensor got = run1(13, "GatherElements", {bf, ints({1, 2}, {1, 0})});
  CHECK(got.dtype == DType::bfloat16);
  CHECK(got.to_f64() == V{2, 1});
}

TEST_CASE("GatherND gathers elements or slices by index tuples, and batch_dims from version 12",
          "[eval][indexing]") {
  const Tensor d = iota({2, 2, 2});
  // The spec's examples 3 and 4.
  CHECK(run1(11, "GatherND", {d, ints({2, 2}, {0, 1, 1, 0})}).to_f64() == V{2, 3, 4, 5});
  const Tensor e4 = run1(13, "GatherND", {d, ints({2, 1, 2}, {0, 1, 1, 0})});
  CHECK(e4.dims == std::vector<int64_t>{2, 1, 2});
  CHECK(e4.to_f64() == V{2, 3, 4, 5});
  // Full tuples give scalars; negative components count from the end.
  CHECK(run1(13, "GatherND", {d, ints({2, 3}, {-1, 0, 1, 0, -1, -2})}).to_f64() == V{5, 2});
  // batch_dims = 1: batch b gathers from d[b]: d[0][1] = [2, 3], d[1][0] = [4, 5].
  const auto batch = [](onnx::NodeProto& n) { set_attr(n, "batch_dims", int64_t{1}); };
  const Tensor b1 = run1(12, "GatherND", {d, ints({2, 1}, {1, 0})}, batch);
  CHECK(b1.dims == std::vector<int64_t>{2, 2});
  CHECK(b1.to_f64() == V{2, 3, 4, 5});
  REQUIRE_THROWS_AS(run1(11, "GatherND", {d, ints({2, 1}, {1, 0})}, batch), bnorm::Error);
  REQUIRE_THROWS_AS(run1(13, "GatherND", {d, ints({2, 1}, {2, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(13, "GatherND", {d, ints({1, 4}, {0, 0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(13, "GatherND", {d, ints({3, 1}, {0, 0, 0})}, batch), bnorm::Error);
}

TEST_CASE("ScatterElements replaces at versions 11 and 13, and duplicate indices keep the last update",
          "[eval][indexing]") {
  // The spec's example 1.
  const Tensor data = floats({3, 3}, V(9, 0.0));
  const Tensor idx = ints({2, 3}, {1, 0, 2, 0, 2, 1});
  const Tensor upd = floats({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2});
  const Tensor out = run1(11, "ScatterElements", {data, idx, upd});
  const V want{2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2};
  const V got = out.to_f64();
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-7));
  CHECK(run1(13, "ScatterElements", {floats({1, 3}, {0, 0, 0}), ints({1, 2}, {-1, 2}), floats({1, 2}, {5, 6})},
             axis(1))
            .to_f64() == V{0, 0, 6});
  REQUIRE_THROWS_AS(run1(13, "ScatterElements", {data, idx, upd}, reduction("add")), bnorm::Error);
}

TEST_CASE("ScatterElements reductions: add and mul from version 16, max and min from 18", "[eval][indexing]") {
  const Tensor data = floats({1, 4}, {1, 2, 3, 4});
  const Tensor idx = ints({1, 4}, {1, 1, 3, -1});
  const Tensor upd = floats({1, 4}, {10, 20, 0.5, 7});
  CHECK(run1(16, "ScatterElements", {data, idx, upd}, reduction("add", 1)).to_f64() == V{1, 32, 3, 11.5});
  CHECK(run1(16, "ScatterElements", {data, idx, upd}, reduction("mul", 1)).to_f64() == V{1, 400, 3, 14});
  CHECK(run1(18, "ScatterElements", {data, idx, upd}, reduction("max", 1)).to_f64() == V{1, 20, 3, 7});
  CHECK(run1(18, "ScatterElements", {data, idx, upd}, reduction("min", 1)).to_f64() == V{1, 2, 3, 0.5});
  REQUIRE_THROWS_AS(run1(16, "ScatterElements", {data, idx, upd}, reduction("max", 1)), bnorm::Error);
  REQUIRE_THROWS_AS(run1(18, "ScatterElements", {data, idx, upd}, reduction("sum", 1)), bnorm::Error);
  // Integers wrap as numpy does: int8 100 + 100 = -56.
  const Tensor i8 = run1(16, "ScatterElements",
                         {make(DType::int8, {2}, {100, 1}), ints({1}, {0}), make(DType::int8, {1}, {100})},
                         reduction("add"));
  CHECK(i8.to_f64() == V{-56, 1});
  // max propagates NaN as numpy's maximum.
  const double nan = std::nan("");
  CHECK(std::isnan(run1(18, "ScatterElements", {floats({2}, {1, 2}), ints({1}, {1}), floats({1}, {nan})},
                        reduction("max"))
                       .to_f64()[1]));
  // bool: add is or, mul is and.
  const Tensor bools = make(DType::boolean, {2}, {1, 0});
  CHECK(run1(16, "ScatterElements", {bools, ints({2}, {0, 1}), make(DType::boolean, {2}, {0, 0})}, reduction("add"))
            .to_f64() == V{1, 0});
  CHECK(run1(16, "ScatterElements", {bools, ints({2}, {0, 1}), make(DType::boolean, {2}, {0, 1})}, reduction("mul"))
            .to_f64() == V{0, 0});
}

TEST_CASE("Scatter-9 replaces like ScatterElements but refuses negative indices; it is gone at 11",
          "[eval][indexing]") {
  // The spec's example 2.
  const Tensor data = floats({1, 5}, {1, 2, 3, 4, 5});
  const Tensor upd = floats({1, 2}, {1.5, 2.5});
  CHECK(run1(9, "Scatter", {data, ints({1, 2}, {1, 3}), upd}, axis(1)).to_f64() == V{1, 1.5, 3, 2.5, 5});
  CHECK(run1(10, "Scatter", {data, ints({1, 2}, {1, 3}), upd}, axis(-1)).to_f64() == V{1, 1.5, 3, 2.5, 5});
  REQUIRE_THROWS_AS(run1(9, "Scatter", {data, ints({1, 2}, {-1, 3}), upd}, axis(1)), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "Scatter", {data, ints({1, 2}, {1, 3}), upd}, axis(1)), bnorm::Error);
  REQUIRE_THROWS_AS(run1(9, "Scatter", {data, ints({1, 2}, {1, 5}), upd}, axis(1)), bnorm::Error);
  REQUIRE_THROWS_AS(run1(9, "Scatter", {data, ints({1, 2}, {1, 3}), floats({1, 3}, {1, 2, 3})}, axis(1)),
                    bnorm::Error);
}

TEST_CASE("ScatterND writes elements or slices, applying its reductions in index order", "[eval][indexing]") {
  // The spec's example 1.
  const Tensor data = iota({8});
  const Tensor idx = ints({4, 1}, {4, 3, 1, 7});
  const Tensor upd = floats({4}, {9, 10, 11, 12});
  CHECK(run1(11, "ScatterND", {data, idx, upd}).to_f64() == V{0, 11, 2, 10, 9, 5, 6, 12});
  // Slices of a [2, 3]: row -1 (= 1) takes [7, 8, 9].
  CHECK(run1(13, "ScatterND", {iota({2, 3}), ints({1, 1}, {-1}), floats({1, 3}, {7, 8, 9})}).to_f64() ==
        V{0, 1, 2, 7, 8, 9});
  const auto red = [](const std::string& r) { return [r](onnx::NodeProto& n) { set_string(n, "reduction", r); }; };
  const Tensor dup = ints({3, 1}, {1, 1, 0});
  const Tensor u3 = floats({3}, {2, 3, 5});
  CHECK(run1(16, "ScatterND", {floats({2}, {1, 1}), dup, u3}, red("add")).to_f64() == V{6, 6});
  CHECK(run1(16, "ScatterND", {floats({2}, {1, 1}), dup, u3}, red("mul")).to_f64() == V{5, 6});
  CHECK(run1(18, "ScatterND", {floats({2}, {1, 4}), dup, u3}, red("max")).to_f64() == V{5, 4});
  CHECK(run1(18, "ScatterND", {floats({2}, {1, 4}), dup, u3}, red("min")).to_f64() == V{1, 2});
  CHECK(run1(18, "ScatterND", {floats({2}, {1, 4}), dup, u3}).to_f64() == V{5, 3});
  REQUIRE_THROWS_AS(run1(13, "ScatterND", {floats({2}, {1, 1}), dup, u3}, red("add")), bnorm::Error);
  REQUIRE_THROWS_AS(run1(16, "ScatterND", {floats({2}, {1, 1}), dup, u3}, red("min")), bnorm::Error);
  REQUIRE_THROWS_AS(run1(18, "ScatterND", {floats({2}, {1, 1}), ints({1, 1}, {2}), floats({1}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(18, "ScatterND", {floats({2}, {1, 1}), dup, floats({2}, {0, 0})}), bnorm::Error);
}
