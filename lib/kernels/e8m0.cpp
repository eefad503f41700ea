// float8e8m0 conversions (e8m0.h).
#include "kernels/e8m0.h"

#include <cmath>
#include <limits>

namespace bnorm::kernels {

double e8m0_to_f64(uint8_t bits) noexcept {
  if (bits == kE8m0Nan) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(bits) - 127);
}

uint8_t to_e8m0(long double x, E8m0Round mode, bool saturate) noexcept {
  if (std::isnan(x)) return kE8m0Nan;
  const long double a = std::fabs(x);
  if (a > std::ldexp(1.0L, 127)) return saturate ? 0xFE : kE8m0Nan;  // infinities too
  if (a < std::ldexp(1.0L, -127)) return saturate ? 0x00 : kE8m0Nan;  // zeros too
  int ex = 0;
  const long double m = std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1): 2^(ex-1) <= a < 2^ex
  int e = ex - 1;
  if (m != 0.5L) {
    if (mode == E8m0Round::up || (mode == E8m0Round::nearest && m >= 0.75L)) ++e;
  }
  return static_cast<uint8_t>(e + 127);  // e in [-127, 127]: a lies in [2^-127, 2^127]
}

}  // namespace bnorm::kernels
