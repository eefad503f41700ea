// GridSample and AffineGrid against hand-computed values from the spec's
// formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

Attrs grid_attrs(const std::string& mode, const std::string& padding, int64_t align) {
  return [=](onnx::NodeProto& n) {
    if (!mode.empty()) set_string(n, "mode", mode);
    if (!padding.empty()) set_string(n, "padding_mode", padding);
    set_attr(n, "align_corners", align);
  };
}

}  // namespace

TEST_CASE("GridSample-16 bilinear reads corners and averages at the center", "[eval][resample]") {
  const Tensor x = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  // (x, y) pairs: corner (-1, -1), center (0, 0), (1, -1) = top right.
  const Tensor grid = f64({1, 1, 3, 2}, {-1, -1, 0, 0, 1, -1});
  check_close(run_node1(16, "GridSample", {x, grid}, grid_attrs("bilinear", "", 1)).to_f64(), {1, 2.5, 2});
  // align_corners 0: -1 is the outer edge, x = -0.5: half the corner, half zero padding.
  check_close(run_node1(16, "GridSample", {x, grid}, grid_attrs("", "zeros", 0)).to_f64(), {0.25, 2.5, 0.5});
  check_close(run_node1(16, "GridSample", {x, grid}, grid_attrs("", "border", 0)).to_f64(), {1, 2.5, 2});
}

TEST_CASE("GridSample-20 reflects coordinates outside the border, repeatedly", "[eval][resample]") {
  const Tensor x = f64({1, 1, 3}, {0, 10, 20});
  // align_corners 1: x = v + 1 within [0, 2]; 2.5 -> 1.5; -3.5 -> 3.5 -> 0.5; 5.25 -> -1.25 -> 1.25.
  const Tensor grid = f64({1, 3, 1}, {1.5, -4.5, 4.25});
  check_close(run_node1(20, "GridSample", {x, grid}, grid_attrs("linear", "reflection", 1)).to_f64(), {15, 5, 12.5});
}

TEST_CASE("GridSample nearest rounds half to even, cubic uses Keys' kernel with a = -0.75", "[eval][resample]") {
  // align_corners 1 on 3 samples: x = v + 1, so 0.5 -> 0 and 1.5 -> 2.
  const Tensor halves = f64({1, 2, 1}, {-0.5, 0.5});
  check_close(run_node1(20, "GridSample", {f64({1, 1, 3}, {1, 2, 4}), halves}, grid_attrs("nearest", "", 1)).to_f64(),
              {1, 4});
  // 4 samples: x = (v + 1) * 1.5 = 1.5 reads 0..3 at distances 1.5, 0.5, 0.5, 1.5.
  const Tensor x = f64({1, 1, 4}, {1, 2, 4, 8});
  const double w1 = -0.75 * (1.5 * 1.5 * 1.5 - 5 * 1.5 * 1.5 + 8 * 1.5 - 4);
  const double w0 = (1.25 * 0.125) - (2.25 * 0.25) + 1;
  const Tensor mid = f64({1, 1, 1}, {0});
  check_close(run_node1(22, "GridSample", {x, mid}, grid_attrs("cubic", "", 1)).to_f64(), {w1 * 1 + w0 * 2 + w0 * 4 + w1 * 8});
}

TEST_CASE("GridSample of uint8 truncates the interpolated value", "[eval][resample]") {
  const Tensor x = Tensor::from_f64(DType::uint8, {1, 1, 2}, {0, 255});
  const Tensor y = run_node1(20, "GridSample", {x, f64({1, 1, 1}, {0})}, grid_attrs("linear", "", 1));
  CHECK(y.dtype == DType::uint8);
  CHECK(y.to_f64() == std::vector<double>{127});
}

TEST_CASE("GridSample refuses mode names of the other versions, bad shapes and NaN locations", "[eval][resample]") {
  const Tensor x4 = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor g4 = f64({1, 1, 1, 2}, {0, 0});
  REQUIRE_THROWS_AS(run_node1(16, "GridSample", {x4, g4}, grid_attrs("linear", "", 0)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(20, "GridSample", {x4, g4}, grid_attrs("bilinear", "", 0)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(16, "GridSample", {f64({1, 1, 2}, {1, 2}), f64({1, 1, 1}, {0})}), bnorm::Error);
  CHECK(run_node1(20, "GridSample", {f64({1, 1, 2}, {1, 2}), f64({1, 1, 1}, {0})}).to_f64() == std::vector<double>{1.5});
  REQUIRE_THROWS_AS(run_node1(20, "GridSample", {x4, f64({1, 1, 1, 3}, {0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(20, "GridSample", {x4, f64({1, 1, 1, 2}, {NAN, 0})}), bnorm::Error);
  // 7 spatial axes of cubic taps would read 4^7 samples per location.
  const Tensor x9 = f64({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1});
  const Tensor g9 = f64({1, 1, 1, 1, 1, 1, 1, 1, 7}, std::vector<double>(7, 0));
  REQUIRE_THROWS_AS(run_node1(20, "GridSample", {x9, g9}, grid_attrs("cubic", "", 0)), bnorm::Error);
  CHECK(run_node1(20, "GridSample", {x9, g9}, grid_attrs("nearest", "", 0)).to_f64() == std::vector<double>{1});
}

TEST_CASE("AffineGrid applies theta to pixel centers or to corners (align_corners)", "[eval][resample]") {
  const Tensor theta = f64({1, 2, 3}, {1, 0, 0.5, 0, 2, 0});
  const Tensor size = Tensor::from_f64(DType::int64, {4}, {1, 1, 2, 2});
  // Centers at -0.5, 0.5; (x, y) -> (x + 0.5, 2y).
  const Tensor y = run_node1(20, "AffineGrid", {theta, size});
  CHECK(y.dims == std::vector<int64_t>{1, 2, 2, 2});
  check_close(y.to_f64(), {0, -1, 1, -1, 0, 1, 1, 1});
  const Tensor size3 = Tensor::from_f64(DType::int64, {4}, {1, 1, 1, 3});
  check_close(run_node1(20, "AffineGrid", {theta, size3}, [](auto& n) { set_attr(n, "align_corners", int64_t{1}); })
                  .to_f64(),
              {-0.5, 0, 0.5, 0, 1.5, 0});
  REQUIRE_THROWS_AS(run_node1(20, "AffineGrid", {f64({1, 3, 4}, std::vector<double>(12, 0)), size}), bnorm::Error);
}
