// The experimental ops of opsets 1..9 against their ONNX 1.4 definitions:
// hand-computed values and formulas evaluated here in float64.
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

Tensor floats(std::vector<int64_t> dims, const std::vector<double>& v, DType t = DType::float32) {
  return Tensor::from_f64(t, std::move(dims), v);
}
Tensor iota(std::vector<int64_t> dims) { return bnorm::test::iota(DType::float32, std::move(dims)); }

}  // namespace

TEST_CASE("Affine, Scale, ScaledTanh and ParametricSoftplus apply their formulas in float64", "[eval][misc]") {
  const std::vector<double> xs{-3, -0.5, 0, 0.25, 2};
  const Tensor x = floats({5}, xs, DType::float64);
  auto ab = [](float a, float b) {
    return [a, b](onnx::NodeProto& n) {
      set_attr(n, "alpha", a);
      set_attr(n, "beta", b);
    };
  };
  std::vector<double> affine, tanh_ref, softplus;
  for (double v : xs) {
    affine.push_back(2.0 * v - 1.0);
    tanh_ref.push_back(1.5 * std::tanh(0.5 * v));
    softplus.push_back(0.5 * std::log(std::exp(2.0 * v) + 1.0));
  }
  check_close(run_node1(9, "Affine", {x}, ab(2, -1)).to_f64(), affine, 1e-15, 1e-15);
  // Affine's defaults are alpha 1, beta 0.
  check_close(run_node1(9, "Affine", {x}).to_f64(), xs, 0, 0);
  check_close(run_node1(9, "ScaledTanh", {x}, ab(1.5f, 0.5f)).to_f64(), tanh_ref, 1e-15, 1e-15);
  check_close(run_node1(9, "ParametricSoftplus", {x}, ab(0.5f, 2)).to_f64(), softplus, 1e-15, 1e-15);
  // exp(beta x) overflows double here; the result is still alpha * beta * x.
  CHECK(run_node1(9, "ParametricSoftplus", {floats({1}, {1000}, DType::float64)}, ab(0.5f, 2)).to_f64()[0] == 1000.0);
  CHECK(run_node1(9, "Scale", {x}, [](auto& n) { set_attr(n, "scale", 4.0f); }).to_f64()[2] == 0.0);
  CHECK(run_node1(9, "Scale", {x}, [](auto& n) { set_attr(n, "scale", 4.0f); }).to_f64()[4] == 8.0);
  const Tensor h = run_node1(9, "Scale", {floats({1}, {1.0 / 3}, DType::float16)}, [](auto& n) { set_attr(n, "scale", 3.0f); });
  CHECK(h.dtype == DType::float16);
  CHECK(h.to_f64()[0] == 1.0);
}

TEST_CASE("ScaledTanh and ParametricSoftplus without alpha or beta, other types and opset 10 are refused",
          "[eval][misc]") {
  const Tensor x = floats({2}, {1, 2});
  REQUIRE_THROWS_AS(run_node1(9, "ScaledTanh", {x}, [](auto& n) { set_attr(n, "alpha", 1.0f); }), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "ParametricSoftplus", {x}, [](auto& n) { set_attr(n, "beta", 1.0f); }), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "Affine", {i64({2}, {1, 2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "Scale", {floats({2}, {1, 2}, DType::bfloat16)}), bnorm::Error);
  // Experimental ops are gone from opset 10 on; GRUUnit is not implemented.
  REQUIRE_THROWS_AS(run_node1(10, "Affine", {x}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "GRUUnit", {x, x, x, x}), bnorm::Error);
}

TEST_CASE("ImageScaler scales and adds one bias per channel of [N,C,H,W]", "[eval][misc]") {
  const Tensor x = iota({2, 3, 1, 2});
  const Tensor y = run_node1(8, "ImageScaler", {x}, [](auto& n) {
    set_attr(n, "scale", 2.0f);
    set_floats(n, "bias", {10, 20, 30});
  });
  std::vector<double> want;
  for (int i = 0; i < 12; ++i) want.push_back(2.0 * i + 10.0 * (1 + (i / 2) % 3));
  CHECK(y.to_f64() == want);
  CHECK(y.dims == x.dims);
  // Without bias only the scale applies.
  CHECK(run_node1(8, "ImageScaler", {x}).to_f64() == x.to_f64());
  REQUIRE_THROWS_AS(run_node1(8, "ImageScaler", {x}, [](auto& n) { set_floats(n, "bias", {1, 2}); }), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(8, "ImageScaler", {iota({3, 1, 2})}, [](auto& n) { set_floats(n, "bias", {1, 2, 3}); }),
                    bnorm::Error);
}

TEST_CASE("Crop cuts (left, top, right, bottom) borders, or a (height, width) window from left and top",
          "[eval][misc]") {
  const Tensor x = iota({1, 2, 4, 5});
  const Tensor b = run_node1(8, "Crop", {x}, [](auto& n) { set_ints(n, "border", {1, 2, 2, 1}); });
  // Rows 2..2 (4 - 1 = 3 exclusive), columns 1..2 (5 - 2 = 3 exclusive) of each channel.
  CHECK(b.dims == std::vector<int64_t>{1, 2, 1, 2});
  CHECK(b.to_f64() == std::vector<double>{11, 12, 31, 32});
  const Tensor s = run_node1(8, "Crop", {x}, [](auto& n) {
    set_ints(n, "border", {2, 1, 0, 0});
    set_ints(n, "scale", {2, 3});
  });
  CHECK(s.dims == std::vector<int64_t>{1, 2, 2, 3});
  CHECK(s.to_f64() == std::vector<double>{7, 8, 9, 12, 13, 14, 27, 28, 29, 32, 33, 34});
  REQUIRE_THROWS_AS(run_node1(8, "Crop", {x}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(8, "Crop", {x}, [](auto& n) { set_ints(n, "border", {3, 0, 3, 0}); }), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(8, "Crop", {x}, [](auto& n) {
                      set_ints(n, "border", {0, 3, 0, 0});
                      set_ints(n, "scale", {2, 2});
                    }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(8, "Crop", {x}, [](auto& n) { set_ints(n, "border", {-1, 0, 0, 0}); }), bnorm::Error);
}

TEST_CASE("DynamicSlice slices by starts, ends and axes inputs, clamping and counting negatives from the end",
          "[eval][misc]") {
  const Tensor data = floats({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor a = run_node1(9, "DynamicSlice", {data, i64({2}, {1, 0}), i64({2}, {2, 3}), i64({2}, {0, 1})});
  CHECK(a.dims == std::vector<int64_t>{1, 3});
  CHECK(a.to_f64() == std::vector<double>{5, 6, 7});
  const Tensor b = run_node1(9, "DynamicSlice", {data, i64({2}, {0, 1}), i64({2}, {-1, 1000})});
  CHECK(b.to_f64() == std::vector<double>{2, 3, 4});
  const Tensor c = run_node1(9, "DynamicSlice", {data, i64({1}, {-3}), i64({1}, {4}), i64({1}, {-1})});
  CHECK(c.to_f64() == std::vector<double>{2, 3, 4, 6, 7, 8});
  REQUIRE_THROWS_AS(run_node1(9, "DynamicSlice", {data, i64({1}, {0}), i64({1}, {1}), i64({1}, {0}), i64({1}, {1})}),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "DynamicSlice", {data, i64({1}, {0}), i64({1}, {1}), i64({1}, {2})}), bnorm::Error);
}

TEST_CASE("ConstantFill fills value as dtype in the shape attribute, the input's dims or its values", "[eval][misc]") {
  const Tensor f = run_node1(9, "ConstantFill", {}, [](auto& n) {
    set_ints(n, "shape", {2, 3});
    set_attr(n, "value", 1.5f);
  });
  CHECK(f.dtype == DType::float32);
  CHECK(f.to_f64() == std::vector<double>(6, 1.5));
  const Tensor i = run_node1(9, "ConstantFill", {iota({2, 1})}, [](auto& n) {
    set_attr(n, "dtype", int64_t{7});
    set_attr(n, "value", 3.0f);
    set_ints(n, "extra_shape", {4});
  });
  CHECK(i.dtype == DType::int64);
  CHECK(i.dims == std::vector<int64_t>{2, 1, 4});
  CHECK(i.to_f64() == std::vector<double>(8, 3));
  const Tensor s = run_node1(9, "ConstantFill", {i64({2}, {3, 0})}, [](auto& n) {
    set_attr(n, "input_as_shape", int64_t{1});
    set_attr(n, "dtype", int64_t{9});
    set_attr(n, "value", 1.0f);
  });
  CHECK(s.dtype == DType::boolean);
  CHECK(s.dims == std::vector<int64_t>{3, 0});
  // No shape and no input: a scalar (Caffe2's FillerOp); value defaults to 0.
  const Tensor z = run_node1(9, "ConstantFill", {});
  CHECK(z.dims.empty());
  CHECK(z.to_f64() == std::vector<double>{0});
  REQUIRE_THROWS_AS(run_node1(9, "ConstantFill", {iota({2})}, [](auto& n) { set_ints(n, "shape", {2}); }), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "ConstantFill", {}, [](auto& n) { set_ints(n, "extra_shape", {2}); }), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "ConstantFill", {}, [](auto& n) {
                      set_attr(n, "dtype", int64_t{6});
                      set_attr(n, "value", 0.5f);
                    }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "ConstantFill", {}, [](auto& n) { set_attr(n, "dtype", int64_t{11}); }), bnorm::Error);
  // A shape of 2^50 elements is refused before anything is allocated.
  REQUIRE_THROWS_AS(run_node1(9, "ConstantFill", {}, [](auto& n) { set_ints(n, "shape", {int64_t{1} << 25, int64_t{1} << 25}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "ConstantFill", {floats({2}, {2, 1.5})}, [](auto& n) { set_attr(n, "input_as_shape", int64_t{1}); }),
                    bnorm::Error);
}

TEST_CASE("GivenTensorFill lays its values out in the shape attribute or the input's dims", "[eval][misc]") {
  const Tensor a = run_node1(9, "GivenTensorFill", {}, [](auto& n) {
    set_ints(n, "shape", {2, 2});
    set_floats(n, "values", {1, 2, 3, 4});
  });
  CHECK(a.dtype == DType::float32);
  CHECK(a.dims == std::vector<int64_t>{2, 2});
  CHECK(a.to_f64() == std::vector<double>{1, 2, 3, 4});
  const Tensor b = run_node1(9, "GivenTensorFill", {floats({3}, {9, 9, 9}, DType::float64)}, [](auto& n) {
    set_ints(n, "extra_shape", {1});
    set_floats(n, "values", {0.5, 1.5, 2.5});
  });
  CHECK(b.dtype == DType::float64);
  CHECK(b.dims == std::vector<int64_t>{3, 1});
  CHECK(b.to_f64() == std::vector<double>{0.5, 1.5, 2.5});
  REQUIRE_THROWS_AS(run_node1(9, "GivenTensorFill", {}, [](auto& n) {
                      set_ints(n, "shape", {3});
                      set_floats(n, "values", {1, 2});
                    }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "GivenTensorFill", {floats({1}, {2})}, [](auto& n) {
                      set_attr(n, "input_as_shape", int64_t{1});
                      set_floats(n, "values", {1, 2});
                    }),
                    bnorm::Error);
}
