// OneHot, Range, CumSum, EyeLike, Trilu, Compress, NonZero, ReverseSequence
// and NonMaxSuppression at each of their versions, against naive loops
// written from the spec's formulas and hand-computed cases.
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

Tensor make(DType t, std::vector<int64_t> dims, const V& v) { return Tensor::from_f64(t, std::move(dims), v); }
Tensor ints(std::vector<int64_t> dims, const V& v) { return make(DType::int64, std::move(dims), v); }
Tensor floats(std::vector<int64_t> dims, const V& v) { return make(DType::float32, std::move(dims), v); }
Tensor bools(std::vector<int64_t> dims, const V& v) { return make(DType::boolean, std::move(dims), v); }

Tensor iota(std::vector<int64_t> dims, DType t = DType::float32) {
  V v(static_cast<size_t>(bnorm::checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i + 1);
  return make(t, std::move(dims), v);
}

// One `op` node on constant inputs; an undefined tensor skips an optional input.
Tensor run1(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  GraphBuilder b(opset);
  std::vector<std::string> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(inputs[i].dtype == DType::undefined ? "" : "in" + std::to_string(i));
    if (!in.back().empty()) b.initializer(in.back(), inputs[i]);
  }
  auto& n = b.node(op, in, {"out"}, "n");
  if (attrs) attrs(n);
  b.output("out");
  return bnorm::evaluate(b.model(), {}).at("out");
}

Attrs with(std::vector<std::pair<std::string, int64_t>> kv) {
  return [kv](onnx::NodeProto& n) {
    for (const auto& [k, v] : kv) set_attr(n, k, v);
  };
}

}  // namespace

TEST_CASE("OneHot inserts the depth dim at the axis; negative indices count from the end from 11, not at 9",
          "[eval][indexing]") {
  const Tensor ind = ints({2}, {1, -1});
  const Tensor depth = floats({}, {3.7});  // truncated to 3
  const Tensor values = floats({2}, {-2, 5});
  const Tensor v11 = run1(11, "OneHot", {ind, depth, values});
  CHECK(v11.dims == std::vector<int64_t>{2, 3});
  CHECK(v11.to_f64() == V{-2, 5, -2, -2, -2, 5});
  CHECK(run1(9, "OneHot", {ind, depth, values}).to_f64() == V{-2, 5, -2, -2, -2, -2});
  // axis 0 on a [2]: out[d][i]; an index past depth is all off.
  const Tensor a0 = run1(11, "OneHot", {ints({2}, {0, 3}), ints({1}, {3}), make(DType::int32, {2}, {0, 1})},
                         with({{"axis", -2}}));
  CHECK(a0.dtype == DType::int32);
  CHECK(a0.dims == std::vector<int64_t>{3, 2});
  CHECK(a0.to_f64() == V{1, 0, 0, 0, 0, 0});
  REQUIRE_THROWS_AS(run1(11, "OneHot", {ind, depth, floats({3}, {0, 1, 2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "OneHot", {ind, ints({2}, {3, 3}), values}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "OneHot", {ind, ints({}, {-1}), values}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "OneHot", {ind, depth, values}, with({{"axis", 2}})), bnorm::Error);
}

TEST_CASE("Range counts ceil((limit - start) / delta) elements start + i * delta of its input type",
          "[eval][indexing]") {
  const Tensor i = run1(11, "Range", {make(DType::int32, {}, {10}), make(DType::int32, {}, {4}),
                                      make(DType::int32, {}, {-3})});
  CHECK(i.dtype == DType::int32);
  CHECK(i.to_f64() == V{10, 7});
  const Tensor f = run1(11, "Range", {floats({}, {1}), floats({}, {2}), floats({}, {0.25})});
  CHECK(f.to_f64() == V{1, 1.25, 1.5, 1.75});
  CHECK(run1(11, "Range", {ints({}, {5}), ints({}, {1}), ints({}, {2})}).dims == std::vector<int64_t>{0});
  // Exact integer counts where double would round: (2^53 + (2^53 + 2)) / 2^53 -> 3.
  const Tensor big = run1(11, "Range", {ints({}, {-9007199254740994.0}), ints({}, {9007199254740992.0}),
                                        ints({}, {9007199254740992.0})});
  CHECK(big.dims == std::vector<int64_t>{3});
  CHECK(big.data<int64_t>()[2] == 9007199254740990);
  REQUIRE_THROWS_AS(run1(11, "Range", {ints({}, {0}), ints({}, {5}), ints({}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "Range", {ints({}, {0}), floats({}, {5}), ints({}, {1})}), bnorm::Error);
  const Tensor h = make(DType::float16, {}, {1});
  REQUIRE_THROWS_AS(run1(11, "Range", {h, h, h}), bnorm::Error);
}

TEST_CASE("CumSum sums along the axis input, exclusive and reverse, float16 only from 14", "[eval][indexing]") {
  const Tensor x = iota({2, 3}, DType::float64);  // 1 2 3 / 4 5 6
  const Tensor ax1 = ints({}, {-1});
  CHECK(run1(11, "CumSum", {x, ax1}).to_f64() == V{1, 3, 6, 4, 9, 15});
  CHECK(run1(11, "CumSum", {x, ax1}, with({{"exclusive", 1}})).to_f64() == V{0, 1, 3, 0, 4, 9});
  CHECK(run1(14, "CumSum", {x, ax1}, with({{"reverse", 1}})).to_f64() == V{6, 5, 3, 15, 11, 6});
  CHECK(run1(14, "CumSum", {x, ax1}, with({{"reverse", 1}, {"exclusive", 1}})).to_f64() == V{5, 3, 0, 11, 6, 0});
  CHECK(run1(14, "CumSum", {x, make(DType::int32, {}, {0})}).to_f64() == V{1, 2, 3, 5, 7, 9});
  // int32 wraps: 2^31 - 1 + 1.
  const Tensor w = run1(14, "CumSum", {make(DType::int32, {2}, {2147483647, 1}), ints({}, {0})});
  CHECK(w.to_f64() == V{2147483647, -2147483648.0});
  // float16 sums are rounded once: 2048 + 1 + 1 = 2050 (stepwise in float16 it stays 2048).
  const Tensor h = make(DType::float16, {3}, {2048, 1, 1});
  CHECK(run1(14, "CumSum", {h, ints({}, {0})}).to_f64() == V{2048, 2048, 2050});
  REQUIRE_THROWS_AS(run1(11, "CumSum", {h, ints({}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(14, "CumSum", {x, ints({}, {2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(14, "CumSum", {make(DType::int8, {1}, {1}), ints({}, {0})}), bnorm::Error);
}

TEST_CASE("EyeLike puts ones at [i, i + k] in dtype or the input's type; bfloat16 from 22", "[eval][indexing]") {
  const Tensor x = make(DType::int32, {3, 4}, V(12, 7.0));
  const Tensor e = run1(9, "EyeLike", {x}, with({{"k", -1}}));
  CHECK(e.dtype == DType::int32);
  CHECK(e.to_f64() == V{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0});
  const Tensor d = run1(22, "EyeLike", {x}, with({{"k", 2}, {"dtype", 11}}));
  CHECK(d.dtype == DType::float64);
  CHECK(d.to_f64() == V{0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0});
  CHECK(run1(9, "EyeLike", {x}, with({{"k", int64_t{1} << 62}})).to_f64() == V(12, 0.0));
  REQUIRE_THROWS_AS(run1(9, "EyeLike", {x}, with({{"dtype", 16}})), bnorm::Error);
  CHECK(run1(22, "EyeLike", {x}, with({{"dtype", 16}})).dtype == DType::bfloat16);
  REQUIRE_THROWS_AS(run1(22, "EyeLike", {x}, with({{"dtype", 8}})), bnorm::Error);
  REQUIRE_THROWS_AS(run1(22, "EyeLike", {iota({4})}), bnorm::Error);
}

TEST_CASE("Trilu keeps j - i >= k (upper) or j - i <= k (lower) of each matrix", "[eval][indexing]") {
  const Tensor x = iota({2, 3, 3});
  for (int upper = 0; upper <= 1; ++upper) {
    for (int64_t k : {-4, -1, 0, 2, 5}) {
      V want;
      for (int m = 0; m < 2; ++m) {
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) {
            const bool keep = upper ? j - i >= k : j - i <= k;
            want.push_back(keep ? m * 9 + i * 3 + j + 1 : 0);
          }
        }
      }
      CHECK(run1(14, "Trilu", {x, ints({}, {static_cast<double>(k)})}, with({{"upper", upper}})).to_f64() == want);
    }
  }
  CHECK(run1(14, "Trilu", {x}).to_f64() == run1(14, "Trilu", {x, ints({}, {0})}).to_f64());
  REQUIRE_THROWS_AS(run1(14, "Trilu", {iota({3})}), bnorm::Error);
}

TEST_CASE("Compress keeps the slices or flattened elements its condition selects", "[eval][indexing]") {
  const Tensor x = iota({3, 2});  // 1 2 / 3 4 / 5 6
  const Tensor c = run1(11, "Compress", {x, bools({2}, {0, 1})}, with({{"axis", 0}}));
  CHECK(c.dims == std::vector<int64_t>{1, 2});
  CHECK(c.to_f64() == V{3, 4});
  CHECK(run1(9, "Compress", {x, bools({2}, {1, 0})}, with({{"axis", -1}})).to_f64() == V{1, 3, 5});
  CHECK(run1(11, "Compress", {x, bools({5}, {0, 1, 0, 0, 1})}).to_f64() == V{2, 5});
  CHECK(run1(11, "Compress", {x, bools({4}, {0, 1, 0, 0})}, with({{"axis", 1}})).to_f64() == V{2, 4, 6});
  REQUIRE_THROWS_AS(run1(11, "Compress", {x, bools({3}, {0, 0, 1})}, with({{"axis", 1}})), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "Compress", {x, ints({2}, {0, 1})}, with({{"axis", 1}})), bnorm::Error);
}

TEST_CASE("NonZero lists coordinates of non-zero elements by dimension, [0, n] for a scalar", "[eval][indexing]") {
  const double nan = std::nan("");
  const Tensor nz = run1(9, "NonZero", {floats({2, 3}, {0, nan, -0.0, 2, 0, 0})});
  CHECK(nz.dims == std::vector<int64_t>{2, 2});
  CHECK(nz.to_f64() == V{0, 1, 1, 0});
  CHECK(run1(13, "NonZero", {make(DType::int16, {}, {4})}).dims == std::vector<int64_t>{0, 1});
  const Tensor bf = make(DType::bfloat16, {2}, {0, 1});
  REQUIRE_THROWS_AS(run1(9, "NonZero", {bf}), bnorm::Error);
  CHECK(run1(13, "NonZero", {bf}).to_f64() == V{1});
}

TEST_CASE("ReverseSequence reverses the first sequence_lens[b] steps of each batch", "[eval][indexing]") {
  // The spec's example 2: batch_axis 0, time_axis 1.
  const Tensor x = iota({4, 4});
  const Tensor out = run1(10, "ReverseSequence", {x, ints({4}, {1, 2, 3, 4})},
                          with({{"batch_axis", 0}, {"time_axis", 1}}));
  CHECK(out.to_f64() == V{1, 2, 3, 4, 6, 5, 7, 8, 11, 10, 9, 12, 16, 15, 14, 13});
  // Default axes (time 0, batch 1) on a [3, 2, 1]: batch 0 reverses 3 steps, batch 1 none.
  CHECK(run1(10, "ReverseSequence", {iota({3, 2, 1}), ints({2}, {3, 0})}).to_f64() == V{5, 2, 3, 4, 1, 6});
  REQUIRE_THROWS_AS(run1(10, "ReverseSequence", {x, ints({4}, {1, 2, 3, 5})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(10, "ReverseSequence", {x, ints({3}, {1, 2, 3})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(10, "ReverseSequence", {x, ints({4}, {1, 1, 1, 1})}, with({{"batch_axis", 0}})),
                    bnorm::Error);
}

TEST_CASE("NonMaxSuppression selects by score, suppresses IoU above the threshold, per batch and class",
          "[eval][indexing]") {
  // Corner boxes [y1, x1, y2, x2]: box 1 overlaps box 0 with IoU 0.5 / 1.5 = 1/3, box 2 is apart.
  const Tensor boxes = floats({1, 3, 4}, {0, 0, 1, 1, 0, 0.5, 1, 1.5, 0, 3, 1, 4});
  const Tensor scores = floats({1, 2, 3}, {0.9, 0.8, 0.3, 0.1, 0.2, 0.2});
  const Tensor none;
  const Tensor max3 = ints({1}, {3});
  const V all{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1, 1, 0, 1, 2, 0, 1, 0};
  // IoU 1/3 above the threshold (default 0) suppresses box 1 in class 0 and, in class 1
  // (order 1, 2, 0: equal scores by lower index), box 0.
  const V cut{0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2};
  CHECK(run1(11, "NonMaxSuppression", {boxes, scores, max3}).to_f64() == cut);
  CHECK(run1(10, "NonMaxSuppression", {boxes, scores, max3, floats({1}, {0.3})}).to_f64() == cut);
  CHECK(run1(11, "NonMaxSuppression", {boxes, scores, max3, floats({1}, {0.34})}).to_f64() == all);
  // score_threshold keeps scores strictly above it; max 1 per class.
  CHECK(run1(11, "NonMaxSuppression", {boxes, scores, ints({1}, {1}), none, floats({1}, {0.2})}).to_f64() ==
        V{0, 0, 0});
  // Without max_output_boxes_per_class nothing is selected.
  CHECK(run1(11, "NonMaxSuppression", {boxes, scores}).dims == std::vector<int64_t>{0, 3});
  // Centre format: box 1 (centre 0.5, 1) equals box 0 shifted by 0.5 in x.
  const Tensor centre = floats({1, 3, 4}, {0.5, 0.5, 1, 1, 1, 0.5, 1, 1, 3.5, 0.5, 1, 1});
  CHECK(run1(11, "NonMaxSuppression", {centre, scores, max3, floats({1}, {0.3})}, with({{"center_point_box", 1}}))
            .to_f64() == cut);
  REQUIRE_THROWS_AS(run1(11, "NonMaxSuppression", {boxes, scores, max3, floats({1}, {1.5})}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "NonMaxSuppression", {boxes, floats({1, 2, 4}, V(8, 0.0)), max3}), bnorm::Error);
  REQUIRE_THROWS_AS(run1(11, "NonMaxSuppression", {boxes, scores, max3}, with({{"center_point_box", 2}})),
                    bnorm::Error);
}
