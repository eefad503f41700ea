// float8e8m0 (ONNX IR 12, the scale type of the OCP Microscaling formats):
// 8 exponent bits, no sign, no mantissa, bias 127. Code c in [0, 254] is
// 2^(c - 127), from E8M0_MIN = 2^-127 (code 0x00) to E8M0_MAX = 2^127
// (0xFE); 0xFF is NaN. There is no zero and no infinity.
//
// Encoding (ONNX Cast-24, `round_mode` and `saturate`), from the exact
// value x of any source (a long double holds every float, double and
// 64-bit integer exactly):
//   NaN                          -> 0xFF
//   +-Inf, |x| > E8M0_MAX        -> 0xFE (saturate) or 0xFF
//   |x| < E8M0_MIN, zeros too    -> 0x00 (saturate) or 0xFF
//   else, 2^e <= |x| < 2^(e+1)   -> 2^e when |x| is 2^e; otherwise
//        up:      2^(e+1)        (the next power of two away from zero)
//        down:    2^e            (toward zero)
//        nearest: 2^(e+1) when |x| >= 1.5 * 2^e (ties up), else 2^e
// Out of range is judged on x before rounding, as the spec's table writes
// it ("x > E8M0_MAX", "x < E8M0_MIN"), so rounding never leaves the range
// (2^127 rounds up to itself). The spec leaves negative x unspecified: the
// sign is dropped (|x| is encoded), as ONNX's reference, which reads only
// the exponent bits, does. Decisions: docs/semantics.md.
#pragma once

#include <cstdint>

namespace bnorm::kernels {

enum class E8m0Round : uint8_t { up, down, nearest };

inline constexpr uint8_t kE8m0Nan = 0xFF;

// 2^(bits - 127), or NaN for 0xFF. Exact.
double e8m0_to_f64(uint8_t bits) noexcept;
// `x` encoded as above.
uint8_t to_e8m0(long double x, E8m0Round mode, bool saturate) noexcept;

}  // namespace bnorm::kernels
