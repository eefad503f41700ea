// Elementwise functions of one tensor, and the registration of the whole
// unary family (the binary integer ops, Hardmax, Det and Einsum live in
// bitwise.cpp, eval/ops/math/matrix.cpp and eval/ops/math/einsum.cpp).
//
// Contract per op (versions differ in the types they allow only, unless
// said otherwise; a type a later version added is accepted at every version):
//   Sin Cos Tan Asin Acos Atan (7, 22), Sinh Cosh Asinh Acosh Atanh (9, 22),
//   Ceil Floor (1, 6, 13; consumed_inputs of version 1 is ignored), Round
//   (11, 22: halves to even), Mish (18, 22: x * tanh(ln(1 + e^x))), Gelu
//   (20: 0.5 x (1 + erf(x / sqrt 2)), or with approximate = "tanh"
//   0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))))   floating types.
//   Erf (9, 13)     floating types; version 9 also integers.
//   Sign (9, 13)    every numeric type: -1, 0 or 1 (NaN stays NaN).
//   Shrink (9)      every numeric type: x < -lambd: x + bias,
//                   x > lambd: x - bias, else 0.
//   IsNaN (9, 13, 20), IsInf (10, 20: detect_positive, detect_negative)
//                   floating types to bool.
//
// Every function computes in double from the exact input value (integer
// inputs of Sign and Shrink in long double, exact for 64-bit values) and
// rounds once to the output type (integers: truncated toward zero,
// saturated).
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

// Defined in the other files of the family.

namespace {

bool is_integer(DType t) {
  switch (t) {
    case DType::int8:
    case DType::int16:
    case DType::int32:
    case DType::int64:
    case DType::uint8:
    case DType::uint16:
    case DType::uint32:
    case DType::uint64: return true;
    default: return false;
  }
}

// Y = f(X) in double; integer inputs only when `integers`, in long double
// there so that every int64 and uint64 value is exact (x86-64).
template <typename F>
Tensors map_values(const OpContext& ctx, bool integers, F f) {
  const Tensor& x = ctx.required(0, "X");
  if (!is_floating(x.dtype) && !(integers && is_integer(x.dtype))) {
    fail(ErrorKind::input, "input of type {} is not allowed (expected {} types)", dtype_name(x.dtype),
         integers ? "numeric" : "floating");
  }
  Tensors out(1);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v = load_values<T>(x);
    for (T& e : v) e = f(e);
    out[0] = make_any(x.dtype, x.dims, v);
  };
  if (is_floating(x.dtype)) {
    run(double{});
  } else {
    run(static_cast<long double>(0));
  }
  return out;
}

// Y = pred(X) as bool, for floating X.
template <typename F>
Tensors classify(const OpContext& ctx, F pred) {
  const Tensor& x = ctx.required(0, "X");
  if (!is_floating(x.dtype)) fail(ErrorKind::input, "input of type {} is not a floating type", dtype_name(x.dtype));
  const std::vector<double> v = load_values<double>(x);
  Tensors out(1);
  out[0] = Tensor(DType::boolean, x.dims);
  auto* p = out[0].data<uint8_t>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = pred(v[i]) ? 1 : 0;
  return out;
}

// Ties to even without depending on the floating-point environment.
double round_half_even(double x) {
  if (!std::isfinite(x)) return x;
  const double r = std::round(x);  // ties away from zero
  if (std::fabs(r - x) == 0.5) return 2.0 * std::round(x / 2.0);
  return r;
}

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// log1p(e^x) overflows to inf for large x, where tanh(inf) = 1 is right.
double mish(double x) { return x * std::tanh(std::log1p(std::exp(x))); }

template <typename T>
T sign(T x) {
  if (std::isnan(x)) return x;
  return x > 0 ? T(1) : x < 0 ? T(-1) : T(0);
}

#define BNORM_FLOAT_UNARY(name, fn) \
  Tensors name(const OpContext& ctx) { \
    return map_values(ctx, false, [](double v) { return fn(v); }); \
  }

}  // namespace

BNORM_FLOAT_UNARY(op_sin, std::sin)

BNORM_FLOAT_UNARY(op_cos, std::cos)

BNORM_FLOAT_UNARY(op_tan, std::tan)

BNORM_FLOAT_UNARY(op_asin, std::asin)

BNORM_FLOAT_UNARY(op_acos, std::acos)

BNORM_FLOAT_UNARY(op_atan, std::atan)

BNORM_FLOAT_UNARY(op_sinh, std::sinh)

BNORM_FLOAT_UNARY(op_cosh, std::cosh)

BNORM_FLOAT_UNARY(op_asinh, std::asinh)

BNORM_FLOAT_UNARY(op_acosh, std::acosh)

BNORM_FLOAT_UNARY(op_atanh, std::atanh)

BNORM_FLOAT_UNARY(op_ceil, std::ceil)

BNORM_FLOAT_UNARY(op_floor, std::floor)

BNORM_FLOAT_UNARY(op_round, round_half_even)

BNORM_FLOAT_UNARY(op_mish, mish)

namespace {

#undef BNORM_FLOAT_UNARY

// Erf-9 allows integer types: erf in double (as ONNX's reference), then
// truncated toward zero, so 0 for |x| < 6 and -1 or 1 beyond, where erf
// rounds to +-1 in double. Erf-13 takes floating types only.
}  // namespace

Tensors op_erf(const OpContext& ctx) {
  return map_values(ctx, ctx.version < 13, [](auto v) { return std::erf(static_cast<double>(v)); });
}

Tensors op_sign(const OpContext& ctx) {
  return map_values(ctx, true, [](auto v) { return sign(v); });
}

Tensors op_gelu(const OpContext& ctx) {
  const std::string approximate = attr_string(*ctx.node, "approximate", "none");
  if (approximate == "none") return map_values(ctx, false, gelu_exact);
  if (approximate == "tanh") return map_values(ctx, false, gelu_tanh);
  fail(ErrorKind::input, "approximate = '{}' is neither 'none' nor 'tanh'", approximate);
}

namespace {

// Integer inputs compute x + bias exactly and truncate toward zero
// (saturating), as numpy's reference does with astype for in-range values.
}  // namespace

Tensors op_shrink(const OpContext& ctx) {
  const double lambd = attr_float(*ctx.node, "lambd", 0.5f);
  const double bias = attr_float(*ctx.node, "bias", 0.0f);
  return map_values(ctx, true, [=](auto x) {
    using T = decltype(x);
    return x < -lambd ? x + T(bias) : x > lambd ? x - T(bias) : T(0);
  });
}

Tensors op_is_nan(const OpContext& ctx) {
  return classify(ctx, [](double v) { return std::isnan(v); });
}

Tensors op_is_inf(const OpContext& ctx) {
  const bool positive = attr_int(*ctx.node, "detect_positive", 1) != 0;
  const bool negative = attr_int(*ctx.node, "detect_negative", 1) != 0;
  return classify(ctx, [=](double v) { return std::isinf(v) && (v > 0 ? positive : negative); });
}

}  // namespace bnorm::eval
