// float8 and float4 conversions (minifloat.h).
#include "kernels/minifloat.h"

#include <cmath>
#include <limits>

namespace bnorm::kernels {

namespace {

struct Format {
  int man;             // mantissa bits
  int exp;             // exponent bits
  int bias;
  uint32_t max_code;   // magnitude bits of the largest finite value
  bool uz;             // NaN is 0x80, no -0
  bool ieee;           // infinities and NaNs at the top exponent (e5m2)
};

Format format(Minifloat f) {
  switch (f) {
    case Minifloat::e4m3fn: return {3, 4, 7, 0x7E, false, false};
    case Minifloat::e4m3fnuz: return {3, 4, 8, 0x7F, true, false};
    case Minifloat::e5m2: return {2, 5, 15, 0x7B, false, true};
    case Minifloat::e5m2fnuz: return {2, 5, 16, 0x7F, true, false};
    case Minifloat::e2m1: return {1, 2, 1, 0x7, false, false};
  }
  return {1, 2, 1, 0x7, false, false};
}

double magnitude(uint32_t code, const Format& fm) {
  const uint32_t e = code >> fm.man;
  const uint32_t m = code & ((1u << fm.man) - 1u);
  if (e == 0) return std::ldexp(static_cast<double>(m), 1 - fm.bias - fm.man);
  return std::ldexp(static_cast<double>((1u << fm.man) | m), static_cast<int>(e) - fm.bias - fm.man);
}

// |a| (finite) rounded to nearest even on the format's grid with no upper
// exponent bound: exponent field << man | mantissa, possibly past max_code.
uint32_t round_code(double a, const Format& fm) {
  const int emin = 1 - fm.bias;
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal or zero: a multiple of 2^(emin - man); rounding up to the
    // smallest normal gives its code too.
    return static_cast<uint32_t>(std::nearbyint(std::ldexp(a, fm.man - emin)));
  }
  int ex = 0;
  const double m = std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1)
  int e = ex - 1 + fm.bias;
  auto frac = static_cast<uint32_t>(std::nearbyint(std::ldexp(m * 2.0 - 1.0, fm.man)));
  if (frac == (1u << fm.man)) {
    frac = 0;
    ++e;
  }
  if (e >= 1 << (fm.exp + 1)) return UINT32_MAX;  // far out of range; keeps the shift small
  return (static_cast<uint32_t>(e) << fm.man) | frac;
}

}  // namespace

double minifloat_to_f64(uint8_t bits, Minifloat f) noexcept {
  const Format fm = format(f);
  const int width = 1 + fm.exp + fm.man;
  const uint32_t sign_bit = 1u << (width - 1);
  const uint32_t code = bits & (sign_bit - 1u);
  const bool negative = (bits & sign_bit) != 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (fm.uz && negative && code == 0) return nan;
  if (f == Minifloat::e4m3fn && code == 0x7F) return negative ? -nan : nan;
  if (fm.ieee && (code >> fm.man) == (1u << fm.exp) - 1u) {
    if ((code & ((1u << fm.man) - 1u)) != 0) return negative ? -nan : nan;
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  const double v = magnitude(code, fm);
  return negative ? -v : v;
}

uint8_t f64_to_minifloat(double v, Minifloat f, bool saturate) noexcept {
  const Format fm = format(f);
  const int width = 1 + fm.exp + fm.man;
  const uint32_t sign = std::signbit(v) ? 1u << (width - 1) : 0u;
  if (f == Minifloat::e2m1) saturate = true;
  if (std::isnan(v)) {
    if (fm.uz) return 0x80;
    if (f == Minifloat::e2m1) return 0x8;
    return static_cast<uint8_t>(sign | (f == Minifloat::e5m2 ? 0x7Eu : 0x7Fu));
  }
  uint32_t code = std::isinf(v) ? UINT32_MAX : round_code(std::fabs(v), fm);
  if (code > fm.max_code) {
    if (saturate) code = fm.max_code;
    else if (fm.uz) return 0x80;
    else if (fm.ieee) code = 0x7C;
    else return static_cast<uint8_t>(sign | 0x7Fu);
  }
  if (code == 0 && fm.uz) return 0;
  return static_cast<uint8_t>(sign | code);
}

double minifloat_max(Minifloat f) noexcept {
  const Format fm = format(f);
  return magnitude(fm.max_code, fm);
}

}  // namespace bnorm::kernels
