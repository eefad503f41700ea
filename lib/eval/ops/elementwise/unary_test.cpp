// Elementwise functions of one tensor (unary.cpp): every version's
// range, the attributes, types, NaN and infinities. Expected values come
// from the spec's formulas in double, or by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"
#include "kernels/half.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
Tensor run1(int64_t opset, const std::string& op, const Tensor& x, const Attrs& attrs = {}) {
  return run_node1(opset, op, {x}, attrs);
}

Tensor tensor(DType t, const V& v) { return Tensor::from_f64(t, {static_cast<int64_t>(v.size())}, v); }

// Equal elementwise, NaN matching NaN and the sign of zeros compared.
bool same(const V& a, const V& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i]))) return false;
  }
  return true;
}

// Equal within a relative 1e-14: formulas whose library calls may differ in the last bit.
bool near(const V& a, const V& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::fabs(a[i] - b[i]) > 1e-14 * std::fabs(b[i])) return false;
  }
  return true;
}

// f applied in double to x as float, then rounded to float: what a float32
// output must hold.
V as_float(const V& x, const std::function<double(double)>& f) {
  V out;
  for (double v : x) out.push_back(static_cast<float>(f(static_cast<float>(v))));
  return out;
}

}  // namespace

TEST_CASE("Trigonometric and hyperbolic functions round the double result once, from their first version",
          "[eval][unary]") {
  struct Case {
    const char* op;
    int since;
    double (*f)(double);
    V x;
  };
  const std::vector<Case> cases = {
      {"Sin", 7, std::sin, {0, 0.5, -2, 10}},        {"Cos", 7, std::cos, {0, 0.5, -2, 10}},
      {"Tan", 7, std::tan, {0, 0.5, -1.2, 3}},       {"Asin", 7, std::asin, {0, 0.5, -1, 2}},
      {"Acos", 7, std::acos, {0, 0.5, -1, 2}},       {"Atan", 7, std::atan, {0, 0.5, -30, kInf}},
      {"Sinh", 9, std::sinh, {0, 0.5, -3, 800}},     {"Cosh", 9, std::cosh, {0, 0.5, -3, 800}},
      {"Asinh", 9, std::asinh, {0, 0.5, -3, 1e10}},  {"Acosh", 9, std::acosh, {1, 1.5, 30, 0.5}},
      {"Atanh", 9, std::atanh, {0, 0.5, -0.9, 1}},
  };
  for (const Case& c : cases) {
    INFO(c.op);
    for (int opset : {c.since, 13, 22, 23}) {
      CHECK(same(run1(opset, c.op, tensor(DType::float32, c.x)).to_f64(), as_float(c.x, c.f)));
    }
    const V d = run1(22, c.op, tensor(DType::float64, c.x)).to_f64();
    for (size_t i = 0; i < d.size(); ++i) CHECK(same({d[i]}, {c.f(c.x[i])}));
    CHECK_THROWS_AS(run1(c.since - 1, c.op, tensor(DType::float32, c.x)), bnorm::Error);
    CHECK_THROWS_AS(run1(22, c.op, tensor(DType::int32, {1})), bnorm::Error);
  }
  // float16: the double result rounds once to half (sin(1) = 0.84147...).
  const Tensor h = run1(22, "Sin", tensor(DType::float16, {1.0}));
  CHECK(h.dtype == DType::float16);
  CHECK(h.to_f64()[0] == bnorm::kernels::f16_to_f32(bnorm::kernels::f64_to_f16(std::sin(1.0))));
}

TEST_CASE("Round takes halves to the even neighbour and keeps zeros, NaN and infinities", "[eval][unary]") {
  const V x = {0.5, 1.5, 2.5, -0.5, -2.5, 2.3, -4.5, 0.9, -0.0, kNaN, -kInf, 4503599627370497.0};
  const V want = {0, 2, 2, -0.0, -2, 2, -4, 1, -0.0, kNaN, -kInf, 4503599627370497.0};
  CHECK(same(run1(11, "Round", tensor(DType::float64, x)).to_f64(), want));
  CHECK(same(run1(22, "Round", tensor(DType::bfloat16, {2.5, -3.5})).to_f64(), V{2, -4}));
  CHECK_THROWS_AS(run1(10, "Round", tensor(DType::float32, x)), bnorm::Error);
}

TEST_CASE("Ceil and Floor hold at versions 1, 6 and 13, version 1's consumed_inputs ignored", "[eval][unary]") {
  const V x = {-1.5, -0.5, 0.5, 1.0, 2.7, kInf, kNaN};
  for (int opset : {1, 6, 13, 23}) {
    const Attrs legacy = [opset](onnx::NodeProto& n) {
      if (opset != 1) return;
      auto* a = n.add_attribute();
      a->set_name("consumed_inputs");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(0);
    };
    CHECK(same(run1(opset, "Ceil", tensor(DType::float32, x), legacy).to_f64(), V{-1, -0.0, 1, 1, 3, kInf, kNaN}));
    CHECK(same(run1(opset, "Floor", tensor(DType::float16, x), legacy).to_f64(), V{-2, -1, 0, 1, 2, kInf, kNaN}));
  }
  CHECK_THROWS_AS(run1(13, "Floor", tensor(DType::int64, {1})), bnorm::Error);
}

TEST_CASE("Erf takes integers at version 9 (truncated) and only floating types at 13", "[eval][unary]") {
  const V x = {0, 0.5, -1, 3, -kInf};
  CHECK(same(run1(13, "Erf", tensor(DType::float64, x)).to_f64(), V{0, std::erf(0.5), std::erf(-1.0), std::erf(3.0), -1}));
  const Tensor i = run1(9, "Erf", tensor(DType::int32, {0, 1, -2, 6, -7}));
  CHECK(i.dtype == DType::int32);
  CHECK(i.to_f64() == V{0, 0, 0, 1, -1});
  CHECK_THROWS_AS(run1(13, "Erf", tensor(DType::int32, {1})), bnorm::Error);
  CHECK_THROWS_AS(run1(8, "Erf", tensor(DType::float32, {1})), bnorm::Error);
}

TEST_CASE("Gelu uses erf by default and the tanh formula with approximate = tanh", "[eval][unary]") {
  const V x = {-3, -0.5, 0, 0.7, 2, 40};
  V exact, approx;
  for (double v : x) {
    exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    approx.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  CHECK(near(run1(20, "Gelu", tensor(DType::float64, x)).to_f64(), exact));
  CHECK(near(run1(20, "Gelu", tensor(DType::float64, x), [](auto& n) { set_string(n, "approximate", "none"); })
                 .to_f64(),
             exact));
  const V t = run1(23, "Gelu", tensor(DType::float64, x), [](auto& n) { set_string(n, "approximate", "tanh"); })
                  .to_f64();
  CHECK(near(t, approx));
  CHECK(!near(t, exact));
  CHECK_THROWS_AS(run1(20, "Gelu", tensor(DType::float32, x), [](auto& n) { set_string(n, "approximate", "erf"); }),
                  bnorm::Error);
  CHECK_THROWS_AS(run1(19, "Gelu", tensor(DType::float32, x)), bnorm::Error);
}

TEST_CASE("Mish is x tanh(ln(1 + e^x)) without overflow at large |x|", "[eval][unary]") {
  const V x = {-1000, -2, 0, 0.5, 3, 1000};
  V want;
  for (double v : x) want.push_back(v * std::tanh(std::log(1 + std::exp(v))));
  want.back() = 1000;  // e^1000 overflows in the formula; the limit is x
  const V got = run1(18, "Mish", tensor(DType::float64, x)).to_f64();
  CHECK(near(got, want));
  CHECK(std::signbit(got[0]));
  CHECK(run1(22, "Mish", tensor(DType::bfloat16, {1000})).to_f64() == V{1000});
  CHECK_THROWS_AS(run1(17, "Mish", tensor(DType::float32, x)), bnorm::Error);
}

TEST_CASE("Sign gives -1, 0 or 1 in the input's type, NaN for NaN", "[eval][unary]") {
  CHECK(same(run1(9, "Sign", tensor(DType::float32, {-2.5, 0, 1e-30, kNaN, -kInf})).to_f64(), V{-1, 0, 1, kNaN, -1}));
  const Tensor i = run1(13, "Sign", tensor(DType::int8, {-128, 0, 127}));
  CHECK(i.dtype == DType::int8);
  CHECK(i.to_f64() == V{-1, 0, 1});
  CHECK(run1(13, "Sign", tensor(DType::uint64, {0, 7})).to_f64() == V{0, 1});
  CHECK_THROWS_AS(run1(8, "Sign", tensor(DType::float32, {1})), bnorm::Error);
  CHECK_THROWS_AS(run1(13, "Sign", tensor(DType::boolean, {1})), bnorm::Error);
}

TEST_CASE("Shrink zeroes [-lambd, lambd] and moves the rest toward zero by bias", "[eval][unary]") {
  const V x = {-2, -1.5, -1, 0, 1, 1.5, 2};
  CHECK(run1(9, "Shrink", tensor(DType::float32, x), [](auto& n) { set_attr(n, "lambd", 1.5f); }).to_f64() ==
        V{-2, 0, 0, 0, 0, 0, 2});
  CHECK(run1(9, "Shrink", tensor(DType::float64, x), [](auto& n) {
          set_attr(n, "lambd", 1.0f);
          set_attr(n, "bias", 0.25f);
        }).to_f64() == V{-1.75, -1.25, 0, 0, 0, 1.25, 1.75});
  // Defaults lambd = 0.5, bias = 0; integers truncate x -/+ bias toward zero.
  CHECK(run1(9, "Shrink", tensor(DType::float32, {-0.5, 0.6})).to_f64() == V{0, static_cast<float>(0.6)});
  const Tensor i = run1(9, "Shrink", tensor(DType::int32, {-3, -1, 0, 1, 3}), [](auto& n) {
    set_attr(n, "lambd", 1.0f);
    set_attr(n, "bias", 1.5f);
  });
  CHECK(i.dtype == DType::int32);
  CHECK(i.to_f64() == V{-1, 0, 0, 0, 1});
  CHECK_THROWS_AS(run1(8, "Shrink", tensor(DType::float32, x)), bnorm::Error);
}

TEST_CASE("IsNaN and IsInf give booleans, IsInf detects either sign on request", "[eval][unary]") {
  const V x = {1, kNaN, kInf, -kInf, 0, -1e300};
  const Tensor nan = run1(9, "IsNaN", tensor(DType::float64, x));
  CHECK(nan.dtype == DType::boolean);
  CHECK(nan.to_f64() == V{0, 1, 0, 0, 0, 0});
  // -1e300 is -inf in float and half.
  CHECK(run1(20, "IsNaN", tensor(DType::float16, x)).to_f64() == V{0, 1, 0, 0, 0, 0});
  CHECK(run1(20, "IsInf", tensor(DType::float16, x)).to_f64() == V{0, 0, 1, 1, 0, 1});
  CHECK(run1(10, "IsInf", tensor(DType::float32, x)).to_f64() == V{0, 0, 1, 1, 0, 1});
  CHECK(run1(20, "IsInf", tensor(DType::float64, x), [](auto& n) { set_attr(n, "detect_negative", int64_t{0}); })
            .to_f64() == V{0, 0, 1, 0, 0, 0});
  CHECK(run1(20, "IsInf", tensor(DType::float64, x), [](auto& n) { set_attr(n, "detect_positive", int64_t{0}); })
            .to_f64() == V{0, 0, 0, 1, 0, 0});
  CHECK_THROWS_AS(run1(9, "IsInf", tensor(DType::float32, x)), bnorm::Error);
  CHECK_THROWS_AS(run1(13, "IsNaN", tensor(DType::int32, {1})), bnorm::Error);
}

TEST_CASE("Elementwise ops keep an empty tensor's shape", "[eval][unary]") {
  const Tensor e = run1(13, "Floor", Tensor(DType::float32, {0, 3}));
  CHECK(e.dims == std::vector<int64_t>{0, 3});
  CHECK(run1(20, "IsNaN", Tensor(DType::float32, {2, 0})).dims == std::vector<int64_t>{2, 0});
}
