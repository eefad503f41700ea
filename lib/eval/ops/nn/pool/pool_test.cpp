// LpPool, GlobalMaxPool, GlobalLpPool, MaxUnpool, and the version-bound
// attributes of MaxPool/AveragePool, on hand-computed cases.
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

Attrs kernel(std::vector<int64_t> k, std::function<void(onnx::NodeProto&)> more = {}) {
  return [=](onnx::NodeProto& n) {
    set_ints(n, "kernel_shape", k);
    if (more) more(n);
  };
}

}  // namespace

TEST_CASE("LpPool is the p-norm of each window, p is a float at 1 and an int from 2", "[eval][resample]") {
  const Tensor x = f32({1, 1, 3}, {-3, 4, 12});
  auto p_int = [](int64_t p) { return [p](onnx::NodeProto& n) { set_attr(n, "p", p); }; };
  const std::vector<double> l2 = run_node1(11, "LpPool", {x}, kernel({2})).to_f64();
  CHECK(l2[0] == 5);
  CHECK(l2[1] == Approx(std::sqrt(160.0)).epsilon(1e-7));
  CHECK(run_node1(2, "LpPool", {x}, kernel({2}, p_int(1))).to_f64() == std::vector<double>{7, 16});
  CHECK(run_node1(1, "LpPool", {x}, kernel({3}, [](auto& n) { set_attr(n, "p", 1.0f); })).to_f64() ==
        std::vector<double>{19});
  REQUIRE_THROWS_AS(run_node1(2, "LpPool", {x}, kernel({2}, [](auto& n) { set_attr(n, "p", 1.0f); })), bnorm::Error);
  // Dilation 2 joins elements 0 and 2; only from version 18.
  auto dilated = kernel({2}, [](auto& n) { set_ints(n, "dilations", {2}); });
  CHECK(run_node1(18, "LpPool", {x}, dilated).to_f64()[0] == Approx(std::sqrt(9.0 + 144.0)));
  REQUIRE_THROWS_AS(run_node1(11, "LpPool", {x}, dilated), bnorm::Error);
}

TEST_CASE("GlobalMaxPool and GlobalLpPool reduce each plane, NaN propagates through the max", "[eval][resample]") {
  const Tensor x = f32({1, 2, 2}, {3, -4, 1, NAN});
  const Tensor m = run_node1(22, "GlobalMaxPool", {x});
  CHECK(m.dims == std::vector<int64_t>{1, 2, 1});
  CHECK(m.to_f64()[0] == 3);
  CHECK(std::isnan(m.to_f64()[1]));
  const Tensor y = run_node1(2, "GlobalLpPool", {f32({1, 1, 2, 1}, {3, -4})});
  CHECK(y.dims == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(y.to_f64() == std::vector<double>{5});
  CHECK(run_node1(1, "GlobalLpPool", {f32({1, 1, 2}, {3, -4})}, [](auto& n) { set_attr(n, "p", 1.0f); }).to_f64() ==
        std::vector<double>{7});
  REQUIRE_THROWS_AS(run_node1(22, "GlobalMaxPool", {f32({2}, {1, 2})}), bnorm::Error);
}

TEST_CASE("MaxUnpool scatters by MaxPool's indices and pads to output_shape at the end", "[eval][resample]") {
  const Tensor x = f32({1, 1, 2}, {7, 9});
  const Tensor idx = i64({1, 1, 2}, {1, 2});
  auto strided = kernel({2}, [](auto& n) { set_ints(n, "strides", {2}); });
  CHECK(run_node1(11, "MaxUnpool", {x, idx}, strided).to_f64() == std::vector<double>{0, 7, 9, 0});
  const Tensor y = run_node1(9, "MaxUnpool", {x, idx, i64({3}, {1, 1, 6})}, strided);
  CHECK(y.to_f64() == std::vector<double>{0, 7, 9, 0, 0, 0});
  REQUIRE_THROWS_AS(run_node1(22, "MaxUnpool", {x, i64({1, 1, 2}, {1, 4})}, strided), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(22, "MaxUnpool", {x, idx, i64({3}, {1, 1, 3})}, strided), bnorm::Error);
}

TEST_CASE("MaxPool and AveragePool refuse attributes their version does not have", "[eval][resample]") {
  const Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  auto dilated = kernel({2}, [](auto& n) { set_ints(n, "dilations", {2}); });
  CHECK(run_node1(19, "AveragePool", {x}, dilated).to_f64() == std::vector<double>{2, 3, 4});
  REQUIRE_THROWS_AS(run_node1(11, "AveragePool", {x}, dilated), bnorm::Error);
  CHECK(run_node1(10, "MaxPool", {x}, dilated).to_f64() == std::vector<double>{3, 4, 5});
  REQUIRE_THROWS_AS(run_node1(8, "MaxPool", {x}, dilated), bnorm::Error);
  auto ceil = kernel({2}, [](auto& n) {
    set_ints(n, "strides", {2});
    set_attr(n, "ceil_mode", int64_t{1});
  });
  CHECK(run_node1(10, "MaxPool", {x}, ceil).to_f64() == std::vector<double>{2, 4, 5});
  REQUIRE_THROWS_AS(run_node1(8, "MaxPool", {x}, ceil), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(1, "AveragePool", {x}, kernel({2}, [](auto& n) { set_attr(n, "count_include_pad", int64_t{1}); })),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "MaxPool", {x}, kernel({2}, [](auto& n) { set_string(n, "auto_pad", "SAME"); })),
                    bnorm::Error);
}
