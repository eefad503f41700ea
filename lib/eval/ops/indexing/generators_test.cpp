// OneHot, Range, CumSum, EyeLike, Trilu, Compress, NonZero, ReverseSequence
// and NonMaxSuppression at each of their versions, against naive loops
// written from the spec's formulas and hand-computed cases.
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
Tensor bools(std::vector<int64_t> dims, const V& v) { return tensor_of(DType::boolean, std::move(dims), v); }

// 1, 2, ..., n.
Tensor iota(std::vector<int64_t> dims, DType t = DType::float32) { return bnorm::test::iota(t, std::move(dims), 1); }

}  // namespace

TEST_CASE("OneHot inserts the depth dim at the axis, negative indices count from the end from 11, not at 9",
          "[eval][indexing]") {
  const Tensor ind = i64({2}, {1, -1});
  const Tensor depth = f32({}, {3.7});  // truncated to 3
  const Tensor values = f32({2}, {-2, 5});
  const Tensor v11 = run_node1(11, "OneHot", {ind, depth, values});
  CHECK(v11.dims == std::vector<int64_t>{2, 3});
  CHECK(v11.to_f64() == V{-2, 5, -2, -2, -2, 5});
  CHECK(run_node1(9, "OneHot", {ind, depth, values}).to_f64() == V{-2, 5, -2, -2, -2, -2});
  // axis 0 on a [2]: out[d][i]; an index past depth is all off.
  const Tensor a0 = run_node1(11, "OneHot", {i64({2}, {0, 3}), i64({1}, {3}), tensor_of(DType::int32, {2}, {0, 1})},
                         int_attrs({{"axis", -2}}));
  CHECK(a0.dtype == DType::int32);
  CHECK(a0.dims == std::vector<int64_t>{3, 2});
  CHECK(a0.to_f64() == V{1, 0, 0, 0, 0, 0});
  REQUIRE_THROWS_AS(run_node1(11, "OneHot", {ind, depth, f32({3}, {0, 1, 2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "OneHot", {ind, i64({2}, {3, 3}), values}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "OneHot", {ind, i64({}, {-1}), values}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "OneHot", {ind, depth, values}, int_attrs({{"axis", 2}})), bnorm::Error);
}

TEST_CASE("Range counts ceil((limit - start) / delta) elements start + i * delta of its input type",
          "[eval][indexing]") {
  const Tensor i = run_node1(11, "Range", {tensor_of(DType::int32, {}, {10}), tensor_of(DType::int32, {}, {4}),
                                      tensor_of(DType::int32, {}, {-3})});
  CHECK(i.dtype == DType::int32);
  CHECK(i.to_f64() == V{10, 7});
  const Tensor f = run_node1(11, "Range", {f32({}, {1}), f32({}, {2}), f32({}, {0.25})});
  CHECK(f.to_f64() == V{1, 1.25, 1.5, 1.75});
  CHECK(run_node1(11, "Range", {i64({}, {5}), i64({}, {1}), i64({}, {2})}).dims == std::vector<int64_t>{0});
  // Exact integer counts where double would round: (2^53 + (2^53 + 2)) / 2^53 -> 3.
  const Tensor big = run_node1(11, "Range", {i64({}, {-9007199254740994.0}), i64({}, {9007199254740992.0}),
                                        i64({}, {9007199254740992.0})});
  CHECK(big.dims == std::vector<int64_t>{3});
  CHECK(big.data<int64_t>()[2] == 9007199254740990);
  REQUIRE_THROWS_AS(run_node1(11, "Range", {i64({}, {0}), i64({}, {5}), i64({}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "Range", {i64({}, {0}), f32({}, {5}), i64({}, {1})}), bnorm::Error);
  const Tensor h = tensor_of(DType::float16, {}, {1});
  REQUIRE_THROWS_AS(run_node1(11, "Range", {h, h, h}), bnorm::Error);
}

TEST_CASE("CumSum sums along the axis input, exclusive and reverse, float16 only from 14", "[eval][indexing]") {
  const Tensor x = iota({2, 3}, DType::float64);  // 1 2 3 / 4 5 6
  const Tensor ax1 = i64({}, {-1});
  CHECK(run_node1(11, "CumSum", {x, ax1}).to_f64() == V{1, 3, 6, 4, 9, 15});
  CHECK(run_node1(11, "CumSum", {x, ax1}, int_attrs({{"exclusive", 1}})).to_f64() == V{0, 1, 3, 0, 4, 9});
  CHECK(run_node1(14, "CumSum", {x, ax1}, int_attrs({{"reverse", 1}})).to_f64() == V{6, 5, 3, 15, 11, 6});
  CHECK(run_node1(14, "CumSum", {x, ax1}, int_attrs({{"reverse", 1}, {"exclusive", 1}})).to_f64() == V{5, 3, 0, 11, 6, 0});
  CHECK(run_node1(14, "CumSum", {x, tensor_of(DType::int32, {}, {0})}).to_f64() == V{1, 2, 3, 5, 7, 9});
  // int32 wraps: 2^31 - 1 + 1.
  const Tensor w = run_node1(14, "CumSum", {tensor_of(DType::int32, {2}, {2147483647, 1}), i64({}, {0})});
  CHECK(w.to_f64() == V{2147483647, -2147483648.0});
  // float16 sums are rounded once: 2048 + 1 + 1 = 2050 (stepwise in float16 it stays 2048).
  const Tensor h = tensor_of(DType::float16, {3}, {2048, 1, 1});
  CHECK(run_node1(14, "CumSum", {h, i64({}, {0})}).to_f64() == V{2048, 2048, 2050});
  REQUIRE_THROWS_AS(run_node1(11, "CumSum", {h, i64({}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(14, "CumSum", {x, i64({}, {2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(14, "CumSum", {tensor_of(DType::int8, {1}, {1}), i64({}, {0})}), bnorm::Error);
}

TEST_CASE("EyeLike puts ones at [i, i + k] in dtype or the input's type, bfloat16 from 22", "[eval][indexing]") {
  const Tensor x = tensor_of(DType::int32, {3, 4}, V(12, 7.0));
  const Tensor e = run_node1(9, "EyeLike", {x}, int_attrs({{"k", -1}}));
  CHECK(e.dtype == DType::int32);
  CHECK(e.to_f64() == V{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0});
  const Tensor d = run_node1(22, "EyeLike", {x}, int_attrs({{"k", 2}, {"dtype", 11}}));
  CHECK(d.dtype == DType::float64);
  CHECK(d.to_f64() == V{0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0});
  CHECK(run_node1(9, "EyeLike", {x}, int_attrs({{"k", int64_t{1} << 62}})).to_f64() == V(12, 0.0));
  REQUIRE_THROWS_AS(run_node1(9, "EyeLike", {x}, int_attrs({{"dtype", 16}})), bnorm::Error);
  CHECK(run_node1(22, "EyeLike", {x}, int_attrs({{"dtype", 16}})).dtype == DType::bfloat16);
  REQUIRE_THROWS_AS(run_node1(22, "EyeLike", {x}, int_attrs({{"dtype", 8}})), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(22, "EyeLike", {iota({4})}), bnorm::Error);
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
      CHECK(run_node1(14, "Trilu", {x, i64({}, {static_cast<double>(k)})}, int_attrs({{"upper", upper}})).to_f64() == want);
    }
  }
  CHECK(run_node1(14, "Trilu", {x}).to_f64() == run_node1(14, "Trilu", {x, i64({}, {0})}).to_f64());
  REQUIRE_THROWS_AS(run_node1(14, "Trilu", {iota({3})}), bnorm::Error);
}

TEST_CASE("Compress keeps the slices or flattened elements its condition selects", "[eval][indexing]") {
  const Tensor x = iota({3, 2});  // 1 2 / 3 4 / 5 6
  const Tensor c = run_node1(11, "Compress", {x, bools({2}, {0, 1})}, int_attrs({{"axis", 0}}));
  CHECK(c.dims == std::vector<int64_t>{1, 2});
  CHECK(c.to_f64() == V{3, 4});
  CHECK(run_node1(9, "Compress", {x, bools({2}, {1, 0})}, int_attrs({{"axis", -1}})).to_f64() == V{1, 3, 5});
  CHECK(run_node1(11, "Compress", {x, bools({5}, {0, 1, 0, 0, 1})}).to_f64() == V{2, 5});
  CHECK(run_node1(11, "Compress", {x, bools({4}, {0, 1, 0, 0})}, int_attrs({{"axis", 1}})).to_f64() == V{2, 4, 6});
  REQUIRE_THROWS_AS(run_node1(11, "Compress", {x, bools({3}, {0, 0, 1})}, int_attrs({{"axis", 1}})), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "Compress", {x, i64({2}, {0, 1})}, int_attrs({{"axis", 1}})), bnorm::Error);
}

TEST_CASE("NonZero lists coordinates of non-zero elements by dimension, [0, n] for a scalar", "[eval][indexing]") {
  const double nan = std::nan("");
  const Tensor nz = run_node1(9, "NonZero", {f32({2, 3}, {0, nan, -0.0, 2, 0, 0})});
  CHECK(nz.dims == std::vector<int64_t>{2, 2});
  CHECK(nz.to_f64() == V{0, 1, 1, 0});
  CHECK(run_node1(13, "NonZero", {tensor_of(DType::int16, {}, {4})}).dims == std::vector<int64_t>{0, 1});
  const Tensor bf = tensor_of(DType::bfloat16, {2}, {0, 1});
  REQUIRE_THROWS_AS(run_node1(9, "NonZero", {bf}), bnorm::Error);
  CHECK(run_node1(13, "NonZero", {bf}).to_f64() == V{1});
}

TEST_CASE("ReverseSequence reverses the first sequence_lens[b] steps of each batch", "[eval][indexing]") {
  // The spec's example 2: batch_axis 0, time_axis 1.
  const Tensor x = iota({4, 4});
  const Tensor out = run_node1(10, "ReverseSequence", {x, i64({4}, {1, 2, 3, 4})},
                          int_attrs({{"batch_axis", 0}, {"time_axis", 1}}));
  CHECK(out.to_f64() == V{1, 2, 3, 4, 6, 5, 7, 8, 11, 10, 9, 12, 16, 15, 14, 13});
  // Default axes (time 0, batch 1) on a [3, 2, 1]: batch 0 reverses 3 steps, batch 1 none.
  CHECK(run_node1(10, "ReverseSequence", {iota({3, 2, 1}), i64({2}, {3, 0})}).to_f64() == V{5, 2, 3, 4, 1, 6});
  REQUIRE_THROWS_AS(run_node1(10, "ReverseSequence", {x, i64({4}, {1, 2, 3, 5})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(10, "ReverseSequence", {x, i64({3}, {1, 2, 3})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(10, "ReverseSequence", {x, i64({4}, {1, 1, 1, 1})}, int_attrs({{"batch_axis", 0}})),
                    bnorm::Error);
}

TEST_CASE("NonMaxSuppression selects by score, suppresses IoU above the threshold, per batch and class",
          "[eval][indexing]") {
  // Corner boxes [y1, x1, y2, x2]: box 1 overlaps box 0 with IoU 0.5 / 1.5 = 1/3, box 2 is apart.
  const Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.5, 1, 1.5, 0, 3, 1, 4});
  const Tensor scores = f32({1, 2, 3}, {0.9, 0.8, 0.3, 0.1, 0.2, 0.2});
  const Tensor none;
  const Tensor max3 = i64({1}, {3});
  const V all{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1, 1, 0, 1, 2, 0, 1, 0};
  // IoU 1/3 above the threshold (default 0) suppresses box 1 in class 0 and, in class 1
  // (order 1, 2, 0: equal scores by lower index), box 0.
  const V cut{0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2};
  CHECK(run_node1(11, "NonMaxSuppression", {boxes, scores, max3}).to_f64() == cut);
  CHECK(run_node1(10, "NonMaxSuppression", {boxes, scores, max3, f32({1}, {0.3})}).to_f64() == cut);
  CHECK(run_node1(11, "NonMaxSuppression", {boxes, scores, max3, f32({1}, {0.34})}).to_f64() == all);
  // score_threshold keeps scores strictly above it; max 1 per class.
  CHECK(run_node1(11, "NonMaxSuppression", {boxes, scores, i64({1}, {1}), none, f32({1}, {0.2})}).to_f64() ==
        V{0, 0, 0});
  // Without max_output_boxes_per_class nothing is selected.
  CHECK(run_node1(11, "NonMaxSuppression", {boxes, scores}).dims == std::vector<int64_t>{0, 3});
  // Centre format: box 1 (centre 0.5, 1) equals box 0 shifted by 0.5 in x.
  const Tensor centre = f32({1, 3, 4}, {0.5, 0.5, 1, 1, 1, 0.5, 1, 1, 3.5, 0.5, 1, 1});
  CHECK(run_node1(11, "NonMaxSuppression", {centre, scores, max3, f32({1}, {0.3})}, int_attrs({{"center_point_box", 1}}))
            .to_f64() == cut);
  REQUIRE_THROWS_AS(run_node1(11, "NonMaxSuppression", {boxes, scores, max3, f32({1}, {1.5})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "NonMaxSuppression", {boxes, f32({1, 2, 4}, V(8, 0.0)), max3}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "NonMaxSuppression", {boxes, scores, max3}, int_attrs({{"center_point_box", 2}})),
                    bnorm::Error);
}

TEST_CASE("Range-27 takes float16 and bfloat16, rounding start + i * delta once, stash_type 1 only",
          "[eval][indexing]") {
  for (DType t : {DType::float16, DType::bfloat16}) {
    const Tensor r = run_node1(27, "Range", {tensor_of(t, {}, {1}), tensor_of(t, {}, {5}), tensor_of(t, {}, {2})});
    CHECK(r.dtype == t);
    CHECK(r.to_f64() == V{1, 3});
  }
  // float16 holds every second integer from 2048: 2049 rounds to even 2048, 2051 to 2052, 2053 to 2052 (as
  // numpy's arange in float32, then astype(float16)); summing in float16 would stay at 2048.
  const auto h = [](double v) { return tensor_of(DType::float16, {}, {v}); };
  CHECK(run_node1(28, "Range", {h(2048), h(2056), h(1)}).to_f64() == V{2048, 2048, 2050, 2052, 2052, 2052, 2054, 2056});
  REQUIRE_THROWS_AS(run_node1(27, "Range", {h(1), h(5), h(1)}, int_attrs({{"stash_type", 10}})), bnorm::Error);
  // stash_type has no effect on the other types; float16 is Range-27's, not Range-11's.
  CHECK(run_node1(27, "Range", {i64({}, {1}), i64({}, {4}), i64({}, {1})}, int_attrs({{"stash_type", 7}})).to_f64() ==
        V{1, 2, 3});
  REQUIRE_THROWS_AS(run_node1(26, "Range", {h(1), h(5), h(1)}), bnorm::Error);
}

TEST_CASE("CumProd-26 multiplies along the axis input, exclusive and reverse, integers wrapping", "[eval][indexing]") {
  // The Changelog's example, [1, 2, 3].
  const Tensor x = f32({3}, {1, 2, 3});
  const Tensor ax = i64({}, {0});
  CHECK(run_node1(26, "CumProd", {x, ax}).to_f64() == V{1, 2, 6});
  CHECK(run_node1(26, "CumProd", {x, ax}, int_attrs({{"exclusive", 1}})).to_f64() == V{1, 1, 2});
  CHECK(run_node1(26, "CumProd", {x, ax}, int_attrs({{"reverse", 1}})).to_f64() == V{6, 6, 3});
  CHECK(run_node1(26, "CumProd", {x, ax}, int_attrs({{"reverse", 1}, {"exclusive", 1}})).to_f64() == V{6, 3, 1});
  const Tensor m = iota({2, 3}, DType::float64);  // 1 2 3 / 4 5 6
  CHECK(run_node1(26, "CumProd", {m, tensor_of(DType::int32, {}, {0})}).to_f64() == V{1, 2, 3, 4, 10, 18});
  CHECK(run_node1(26, "CumProd", {m, i64({}, {-1})}).to_f64() == V{1, 2, 6, 4, 20, 120});
  // Integers: exact, and wrapping modulo 2^bits (2^16 * 2^16 = 2^32 is 0 in int32 and uint32).
  CHECK(run_node1(26, "CumProd", {tensor_of(DType::int32, {3}, {-3, 2, 4}), ax}).to_f64() == V{-3, -6, -24});
  CHECK(run_node1(26, "CumProd", {tensor_of(DType::int32, {2}, {65536, 65536}), ax}).to_f64() == V{65536, 0});
  CHECK(run_node1(26, "CumProd", {tensor_of(DType::uint32, {2}, {65536, 65537}), ax}).to_f64() == V{65536, 65536});
  const Tensor big = run_node1(26, "CumProd", {i64({2}, {4294967296.0, 4294967297.0}), ax});
  CHECK(big.data<int64_t>()[1] == 4294967296);  // 2^32 (2^32 + 1) mod 2^64
  const Tensor hb = run_node1(26, "CumProd", {tensor_of(DType::bfloat16, {3}, {1.5, 1.5, 1.5}), ax});
  CHECK(hb.dtype == DType::bfloat16);
  CHECK(hb.to_f64() == V{1.5, 2.25, 3.375});
  REQUIRE_THROWS_AS(run_node1(26, "CumProd", {tensor_of(DType::int8, {2}, {1, 2}), ax}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(26, "CumProd", {x, i64({2}, {0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(25, "CumProd", {x, ax}), bnorm::Error);
}
