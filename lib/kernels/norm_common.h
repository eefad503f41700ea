// Element access shared by the normalization-family kernels (internal: for
// lib/kernels/*.cpp): storage types decoded exactly to double and rounded
// once from double (f16/bf16 to nearest even, with half.h's NaN rule), and
// the split of rows over the OpenMP threads.
//
// Rounding a double to f16/bf16 goes through float rounded to odd (the
// double truncated to float, its last bit set when inexact), then to
// nearest even from float: with 24 bits against the target's 11 (f16) or
// 8 (bf16), at least two more, that is the double rounded once to the
// target (Boldo and Melquiond, "When double rounding is odd"), and the
// float step is a few integer operations instead of half.h's frexp/ldexp.
// NaNs take half.h's encoders.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/elementwise.h"
#include "kernels/half.h"

namespace bnorm::kernels::detail {

inline double decode(float v) noexcept { return v; }
inline double decode(double v) noexcept { return v; }
inline double decode(f16 v) noexcept { return f16_to_f32(v); }
inline double decode(bf16 v) noexcept { return bf16_to_f32(v); }

// v (not NaN) rounded to float with round-to-odd.
inline uint32_t odd_float_bits(double v) noexcept {
  const float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  const double back = f;
  if (back == v) return b;
  if (std::fabs(back) > std::fabs(v)) --b;  // rounded away from zero: step back (magnitude)
  return b | 1u;
}

// Float bits (not NaN) to f16, to nearest even: the exponent rebased with
// an addition that lets the FPU round the mantissa (the method of
// Maratyszcza's FP16 library), overflow to infinity, subnormals exact.
inline uint16_t f16_bits_from_float(uint32_t w) noexcept {
  float a;
  const uint32_t abs_bits = w & 0x7FFFFFFFu;
  std::memcpy(&a, &abs_bits, sizeof a);
  float base = (a * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t bias = (w + w) & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  const uint32_t shifted = (bias >> 1) + 0x07800000u;
  float add;
  std::memcpy(&add, &shifted, sizeof add);
  base = add + base;
  uint32_t bits;
  std::memcpy(&bits, &base, sizeof bits);
  const uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return static_cast<uint16_t>(((w & 0x80000000u) >> 16) | nonsign);
}

template <class T>
inline T encode(double v) noexcept {
  if constexpr (std::is_same_v<T, f16>) {
    if (std::isnan(v)) return f64_to_f16(v);
    return {f16_bits_from_float(odd_float_bits(v))};
  } else if constexpr (std::is_same_v<T, bf16>) {
    if (std::isnan(v)) return f64_to_bf16(v);
    const uint32_t b = odd_float_bits(v);
    return {static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16)};
  } else {
    return static_cast<T>(v);
  }
}

// body(r0, r1) over [0, items), one range per thread when `elements` is
// large enough to share; `fence`: each thread fences its non-temporal
// stores (for_tasks).
template <class Fn>
inline void for_row_ranges(size_t items, size_t elements, bool fence, const Fn& body) noexcept {
  if (items == 0) return;
  const bool parallel = elements >= kParallelMinElements;
  const size_t tasks = task_count(items, items, parallel);
  for_tasks(tasks, parallel, fence, [&](size_t t) {
    const size_t r0 = task_begin(t, tasks, items);
    const size_t r1 = task_begin(t + 1, tasks, items);
    if (r0 < r1) body(r0, r1);
  });
}

}  // namespace bnorm::kernels::detail
