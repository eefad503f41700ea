// The loops of quantize.h, templated on the lanes of the level's vectors
// and inlined into its entry points (internal: included by
// quantize_<level>.cpp, one translation unit per level, contraction off:
// x + c - c must round twice). GCC's vector extensions; the tails go
// through the same code on a zero-padded copy, so every element takes the
// same operations at every level.
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/quantize.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {


// Vectors of L lanes.
template <size_t L>
struct Lanes {
  typedef float F32 __attribute__((vector_size(4 * L)));
  typedef double F64 __attribute__((vector_size(8 * L)));
  typedef int32_t I32 __attribute__((vector_size(4 * L)));
  typedef uint8_t U8 __attribute__((vector_size(L)));
  typedef int8_t I8 __attribute__((vector_size(L)));
};

// round_half_even(q) for |q| <= 2^22 (float) or 2^51 (double): adding
// 1.5 * 2^23 (2^52) leaves no fraction bits, the addition rounds to even.
template <class F>
inline F round_even(F q) noexcept {
  using S = std::remove_reference_t<decltype(q[0])>;
  const F m = simd::splat<F>(sizeof(S) == 4 ? S(0x1.8p23) : S(0x1.8p52));
  return (q + m) - m;
}

// saturate(round_half_even(q) + zp) into T's range, lane by lane, the
// first `count` stored as T: q clamped to +-2^20 first (beyond, the result
// saturates either way), NaN to 0. F: L floats or doubles.
template <size_t L, class T, class F>
inline void saturate_store(F q, int32_t zp, T* y, size_t count) noexcept {
  using S = std::remove_reference_t<decltype(q[0])>;
  using I = typename Lanes<L>::I32;
  using B = std::conditional_t<std::is_signed_v<T>, typename Lanes<L>::I8, typename Lanes<L>::U8>;
  const F bound = simd::splat<F>(S(1 << 20)), zero = simd::splat<F>(S(0));
  q = q == q ? q : zero;
  q = q < -bound ? -bound : q;
  q = q > bound ? bound : q;
  I v = __builtin_convertvector(round_even(q), I) + zp;
  constexpr int32_t lo = std::is_signed_v<T> ? -128 : 0, hi = std::is_signed_v<T> ? 127 : 255;
  v = v < lo ? simd::splat<I>(lo) : v;
  v = v > hi ? simd::splat<I>(hi) : v;
  const B bytes = __builtin_convertvector(v, B);
  std::memcpy(y, &bytes, count);
}

template <size_t L, class T>
void quantize_as(const float* __restrict x, size_t n, float scale, int32_t zp, T* __restrict y) noexcept {
  using F = typename Lanes<L>::F32;
  const F s = simd::splat<F>(scale);
  size_t i = 0;
  for (; i + L <= n; i += L) saturate_store<L>(simd::load_bits<F>(x + i) / s, zp, y + i, L);
  if (i < n) {
    F tail{};
    std::memcpy(&tail, x + i, (n - i) * sizeof(float));
    saturate_store<L>(tail / s, zp, y + i, n - i);
  }
}

template <class T>
void dequantize_as(const T* __restrict x, size_t n, int32_t zp, float scale, float* __restrict y) noexcept {
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
}

template <size_t L, class T>
void requantize_as(const int32_t* __restrict acc, size_t n, int64_t bias, double mult, int32_t zp,
                   T* __restrict y) noexcept {
  using F = typename Lanes<L>::F64;
  using I = typename Lanes<L>::I32;
  // |bias| < 2^32: exact, and so is acc + bias.
  const F b = simd::splat<F>(static_cast<double>(bias)), m = simd::splat<F>(mult);
  size_t i = 0;
  for (; i + L <= n; i += L) {
    saturate_store<L>((__builtin_convertvector(simd::load_bits<I>(acc + i), F) + b) * m, zp, y + i, L);
  }
  if (i < n) {
    I tail{};
    std::memcpy(&tail, acc + i, (n - i) * sizeof(int32_t));
    saturate_store<L>((__builtin_convertvector(tail, F) + b) * m, zp, y + i, n - i);
  }
}

template <size_t L>
void range_as(const float* x, size_t n, float& lo, float& hi) noexcept {
  using F = typename Lanes<L>::F32;
  F l{}, h{};
  size_t i = 0;
  for (; i + L <= n; i += L) {  // NaN compares false: skipped
    const F v = simd::load_bits<F>(x + i);
    l = v < l ? v : l;
    h = v > h ? v : h;
  }
  for (; i < n; ++i) {
    l[0] = x[i] < l[0] ? x[i] : l[0];
    h[0] = x[i] > h[0] ? x[i] : h[0];
  }
  lo = l[0];
  hi = h[0];
  for (size_t k = 1; k < L; ++k) {
    lo = std::min(lo, l[k]);
    hi = std::max(hi, h[k]);
  }
}

// L: the floats in one vector of the level (the doubles of requantize: L / 2).
#define BNORM_QUANTIZE_LEVEL(level, ENTRY, L)                                                                   \
  ENTRY void quantize_f32_##level(const float* x, size_t n, float scale, int32_t zp, void* y,                 \
                                  bool is_signed) noexcept {                                                  \
    if (is_signed) return quantize_as<L>(x, n, scale, zp, static_cast<int8_t*>(y));                           \
    quantize_as<L>(x, n, scale, zp, static_cast<uint8_t*>(y));                                                \
  }                                                                                                            \
  ENTRY void dequantize_f32_##level(const void* x, size_t n, bool is_signed, int32_t zp, float scale,         \
                                    float* y) noexcept {                                                      \
    if (is_signed) return dequantize_as(static_cast<const int8_t*>(x), n, zp, scale, y);                      \
    dequantize_as(static_cast<const uint8_t*>(x), n, zp, scale, y);                                           \
  }                                                                                                            \
  ENTRY void requantize_##level(const int32_t* acc, size_t n, int64_t bias, double mult, int32_t zp, void* y, \
                                bool is_signed) noexcept {                                                    \
    if (is_signed) return requantize_as<L / 2>(acc, n, bias, mult, zp, static_cast<int8_t*>(y));                  \
    requantize_as<L / 2>(acc, n, bias, mult, zp, static_cast<uint8_t*>(y));                                          \
  }                                                                                                            \
  ENTRY void range_f32_##level(const float* x, size_t n, float& lo, float& hi) noexcept {                     \
    range_as<L>(x, n, lo, hi);                                                                                \
  }

#define BNORM_QUANTIZE_DECLARE(level, ENTRY)                                                                   \
  ENTRY void quantize_f32_##level(const float* x, size_t n, float scale, int32_t zp, void* y,                 \
                                  bool is_signed) noexcept;                                                   \
  ENTRY void dequantize_f32_##level(const void* x, size_t n, bool is_signed, int32_t zp, float scale,         \
                                    float* y) noexcept;                                                       \
  ENTRY void requantize_##level(const int32_t* acc, size_t n, int64_t bias, double mult, int32_t zp, void* y, \
                                bool is_signed) noexcept;                                                     \
  ENTRY void range_f32_##level(const float* x, size_t n, float& lo, float& hi) noexcept;

BNORM_QUANTIZE_DECLARE(generic, BNORM_ENTRY_GENERIC)
BNORM_QUANTIZE_DECLARE(avx2, BNORM_ENTRY_AVX2)
BNORM_QUANTIZE_DECLARE(avx512, BNORM_ENTRY_AVX512)

}  // namespace bnorm::kernels::detail
