// float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) and float4 (E2M1) conversions,
// on their bit patterns (the low 8 or 4 bits of a byte).
//
// Formats (sign, exponent bits, mantissa bits, bias; max finite):
//   e4m3fn    1.4.3 bias 7   448    NaN S.1111.111, no infinity
//   e4m3fnuz  1.4.3 bias 8   240    NaN 0x80 (the only one), no -0, no infinity
//   e5m2      1.5.2 bias 15  57344  IEEE-like: infinities and NaNs at exponent 31
//   e5m2fnuz  1.5.2 bias 16  57344  NaN 0x80 (the only one), no -0, no infinity
//   e2m1      1.2.1 bias 1   6      no NaN, no infinity
// Decoding is exact. Encoding rounds once, to nearest with ties to even,
// from the exact value, then applies ONNX's Cast tables (Operators.md, Cast):
// with `saturate` an infinity or a value rounding past max finite becomes
// +-max finite; without it, infinity (e5m2) or NaN (the others). -0 becomes
// +0 in the fnuz formats. e2m1 has no NaN and always saturates (ONNX's
// reference, ml_dtypes, maps NaN to 0x8, i.e. -0: so does this).
#pragma once

#include <cstdint>

namespace bnorm::kernels {

enum class Minifloat : uint8_t { e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e2m1 };

double minifloat_to_f64(uint8_t bits, Minifloat f) noexcept;
uint8_t f64_to_minifloat(double v, Minifloat f, bool saturate) noexcept;
double minifloat_max(Minifloat f) noexcept;

}  // namespace bnorm::kernels
