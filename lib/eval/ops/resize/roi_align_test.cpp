// RoiAlign and DeformConv on hand-computed cases: bilinear sampling of a
// linear image is exact, so averages are the function at the mean point.
#include <catch2/catch.hpp>

#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

// value = scale * (offset + flat index) over `dims`.
Tensor ramp(std::vector<int64_t> dims, double scale = 1, double offset = 0) {
  std::vector<double> v(static_cast<size_t>(bnorm::checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (offset + static_cast<double>(i));
  return f32(std::move(dims), v);
}

Attrs roi_attrs(const std::string& mode, const std::string& ctm = {}) {
  return [=](onnx::NodeProto& n) {
    set_attr(n, "sampling_ratio", int64_t{2});
    set_string(n, "mode", mode);
    if (!ctm.empty()) set_string(n, "coordinate_transformation_mode", ctm);
  };
}

}  // namespace

TEST_CASE("RoiAlign averages bilinear samples at the grid cell centers, shifted by -0.5 from 16", "[eval][resample]") {
  // X = 4y + x; roi (0, 0)-(2, 2), one bin, 2 x 2 samples.
  const Tensor x = ramp({1, 1, 4, 4});
  const Tensor rois = f32({1, 4}, {0, 0, 2, 2});
  const Tensor batch = Tensor::from_f64(DType::int64, {1}, {0});
  // No shift: samples at 0.5 and 1.5 -> mean point (1, 1) -> 5.
  CHECK(run_node1(10, "RoiAlign", {x, rois, batch}, roi_attrs("avg")).to_f64() == std::vector<double>{5});
  CHECK(run_node1(16, "RoiAlign", {x, rois, batch}, roi_attrs("avg", "output_half_pixel")).to_f64() ==
        std::vector<double>{5});
  // half_pixel: samples at 0 and 1 -> mean point (0.5, 0.5) -> 2.5.
  CHECK(run_node1(16, "RoiAlign", {x, rois, batch}, roi_attrs("avg")).to_f64() == std::vector<double>{2.5});
  REQUIRE_THROWS_AS(run_node1(10, "RoiAlign", {x, rois, batch}, roi_attrs("avg", "half_pixel")), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(16, "RoiAlign", {x, rois, Tensor::from_f64(DType::int64, {1}, {1})}, roi_attrs("avg")),
                    bnorm::Error);
}

TEST_CASE("RoiAlign max takes the largest weighted corner, so zero-weight corners count", "[eval][resample]") {
  const Tensor rois = f32({1, 4}, {0, 0, 2, 2});
  const Tensor batch = Tensor::from_f64(DType::int64, {1}, {0});
  // half_pixel samples sit on pixels (0..1, 0..1): one corner of weight 1, three of weight 0.
  CHECK(run_node1(16, "RoiAlign", {ramp({1, 1, 4, 4}), rois, batch}, roi_attrs("max")).to_f64() == std::vector<double>{5});
  // All values negative: the zero-weight corners give 0.
  CHECK(run_node1(16, "RoiAlign", {ramp({1, 1, 4, 4}, -1, 1), rois, batch}, roi_attrs("max")).to_f64() ==
        std::vector<double>{0});
}

TEST_CASE("DeformConv with zero offsets is Conv, offsets shift taps with zeros outside", "[eval][resample]") {
  const Tensor x = ramp({1, 1, 3, 3});  // 3y + x
  const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  const Tensor zero = f32({1, 8, 2, 2}, std::vector<double>(32, 0));
  CHECK(run_node1(19, "DeformConv", {x, w, zero}).to_f64() == std::vector<double>{8, 12, 20, 24});
  // Every tap moved by +0.5 along W (odd offset channels): column 2.5 keeps half of column 2.
  std::vector<double> half(32, 0);
  for (int k = 0; k < 4; ++k) std::fill_n(half.begin() + (2 * k + 1) * 4, 4, 0.5);
  const Tensor shifted = f32({1, 8, 2, 2}, half);
  const std::vector<double> y = run_node1(22, "DeformConv", {x, w, shifted}).to_f64();
  CHECK(y[0] == 10);
  CHECK(y[1] == 9.5);
  // mask 0.5 halves every tap; B adds.
  const Tensor mask = f32({1, 4, 2, 2}, std::vector<double>(16, 0.5));
  CHECK(run_node1(19, "DeformConv", {x, w, zero, f32({1}, {100}), mask}).to_f64() == std::vector<double>{104, 106, 110, 112});
  REQUIRE_THROWS_AS(run_node1(19, "DeformConv", {x, w, f32({1, 4, 2, 2}, std::vector<double>(16, 0))}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(19, "DeformConv", {x, w, zero}, [](auto& n) { set_attr(n, "group", int64_t{2}); }),
                    bnorm::Error);
}
