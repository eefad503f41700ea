// LayerNormalization and RMSNormalization rows (see layer_norm.h). At the
// Avx512 level, rows of float, f16 and bf16 data run layer_norm_rows_avx512.cpp's
// loops (the same bits, several times faster on rows in cache; bfloat16
// outputs with AVX512-BF16 where the CPU has it, layer_norm_rows_avx512_bf16.cpp). Otherwise the
// element loop is plain float64 code compiled once per SIMD level (the
// compiler vectorizes it for float and double data); rows with f16 or
// bf16 data take explicit AVX2 loops at the Avx2 and Avx512 levels (F16C
// decoding, norm_common.h's rounding through odd floats, 8 elements at a
// time). No contraction, the same operations in the same order and the
// same partial sums everywhere: every level gives the same bits. The mean
// and variance come from moments.h, the RMS sum of squares from eight
// fixed partial sums.
#pragma GCC optimize("fp-contract=off")

#include "kernels/layer_norm.h"

#include <cmath>
#include <limits>

#include "kernels/isa.h"
#include "kernels/layer_norm_rows.h"
#include "kernels/moments.h"
#include "kernels/norm_common.h"
#include "kernels/simd.h"

namespace bnorm::kernels {
namespace {

using detail::decode;
using detail::encode;

// Eight partial sums (element i in sum i % 8), added pairwise: a fixed
// order whatever the level.
template <class X>
inline double sum_squares(const X* x, size_t n) noexcept {
  double acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      const double v = decode(x[i + j]);
      acc[j] += v * v;
    }
  }
  for (; i < n; ++i) {
    const double v = decode(x[i]);
    acc[i % 8] += v * v;
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// y = (x - m) * inv * s + b, in float64, rounded once to Y.
template <class X, class Y>
inline void scale_row(const X* x, Y* y, size_t n, double m, double inv, const double* s,
                      const double* b) noexcept {
  if (b == nullptr) {
    for (size_t i = 0; i < n; ++i) y[i] = encode<Y>((decode(x[i]) - m) * inv * s[i]);
  } else {
    for (size_t i = 0; i < n; ++i) y[i] = encode<Y>((decode(x[i]) - m) * inv * s[i] + b[i]);
  }
}

#if BNORM_SIMD_LEVELS
#define BNORM_VEC16 static inline __attribute__((target(BNORM_TARGET_AVX2)))

template <class T>
constexpr bool is16 = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// x[0..8) as two vectors of 4 doubles.
template <class X>
BNORM_VEC16 void load8(const X* x, __m256d& lo, __m256d& hi) {
  __m256 f;
  if constexpr (std::is_same_v<X, double>) {
    lo = _mm256_loadu_pd(x);
    hi = _mm256_loadu_pd(x + 4);
    return;
  } else if constexpr (std::is_same_v<X, float>) {
    f = _mm256_loadu_ps(x);
  } else if constexpr (std::is_same_v<X, f16>) {
    f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    f = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  lo = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
  hi = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
}

// odd_float_bits (norm_common.h) of 4 doubles.
BNORM_VEC16 __m128i odd_float4(__m256d v) {
  const __m128 f = _mm256_cvtpd_ps(v);
  const __m256d back = _mm256_cvtps_pd(f);
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll));
  const __m256d inexact = _mm256_cmp_pd(back, v, _CMP_NEQ_UQ);
  const __m256d away = _mm256_cmp_pd(_mm256_and_pd(back, abs_mask), _mm256_and_pd(v, abs_mask), _CMP_GT_OQ);
  // 64-bit masks to 32-bit lanes: the low half of each.
  const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m128i in32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(inexact), pick));
  const __m128i away32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(away), pick));
  __m128i b = _mm_add_epi32(_mm_castps_si128(f), away32);  // away: all ones, minus one
  return _mm_or_si128(b, _mm_and_si128(in32, _mm_set1_epi32(1)));
}

// lo, hi rounded once to Y into y[0..8).
template <class Y>
BNORM_VEC16 void store8(Y* y, __m256d lo, __m256d hi) {
  if constexpr (std::is_same_v<Y, double>) {
    _mm256_storeu_pd(y, lo);
    _mm256_storeu_pd(y + 4, hi);
  } else if constexpr (std::is_same_v<Y, float>) {
    _mm256_storeu_ps(y, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
  } else {
    const __m256i b = _mm256_set_m128i(odd_float4(hi), odd_float4(lo));
    if constexpr (std::is_same_v<Y, f16>) {
      const __m128i h = _mm256_cvtps_ph(_mm256_castsi256_ps(b), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y), h);
    } else {
      const __m256i one = _mm256_set1_epi32(1);
      const __m256i rounded = _mm256_srli_epi32(
          _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), _mm256_and_si256(_mm256_srli_epi32(b, 16), one)), 16);
      const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0x40));
      const __m256 f = _mm256_castsi256_ps(b);
      const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
      const __m256i h32 = _mm256_blendv_epi8(rounded, quiet_nan, nan);
      const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(h32, h32), 0x08);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y), _mm256_castsi256_si128(packed));
    }
  }
}

// scale_row, 8 elements at a time, the tail as scale_row does it.
template <class X, class Y>
BNORM_VEC16 void scale_row8(const X* x, Y* y, size_t n, double m, double inv, const double* s,
                            const double* b) {
  const __m256d vm = _mm256_set1_pd(m);
  const __m256d vinv = _mm256_set1_pd(inv);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d lo, hi;
    load8(x + i, lo, hi);
    lo = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(lo, vm), vinv), _mm256_loadu_pd(s + i));
    hi = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(hi, vm), vinv), _mm256_loadu_pd(s + i + 4));
    if (b != nullptr) {
      lo = _mm256_add_pd(lo, _mm256_loadu_pd(b + i));
      hi = _mm256_add_pd(hi, _mm256_loadu_pd(b + i + 4));
    }
    store8(y + i, lo, hi);
  }
  scale_row(x + i, y + i, n - i, m, inv, s + i, b == nullptr ? nullptr : b + i);
}

// sum_squares with the same eight partial sums.
template <class X>
BNORM_VEC16 double sum_squares8(const X* x, size_t n) {
  __m256d a0 = _mm256_setzero_pd();
  __m256d a1 = _mm256_setzero_pd();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d lo, hi;
    load8(x + i, lo, hi);
    a0 = _mm256_add_pd(a0, _mm256_mul_pd(lo, lo));
    a1 = _mm256_add_pd(a1, _mm256_mul_pd(hi, hi));
  }
  double acc[8];
  _mm256_storeu_pd(acc, a0);
  _mm256_storeu_pd(acc + 4, a1);
  for (; i < n; ++i) {
    const double v = decode(x[i]);
    acc[i % 8] += v * v;
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}
#endif

template <bool Vec, class X>
inline double sum_squares_at(const X* x, size_t n) noexcept {
#if BNORM_SIMD_LEVELS
  if constexpr (Vec && is16<X>) return sum_squares8(x, n);
#endif
  return sum_squares(x, n);
}

template <bool Vec, class X, class Y>
inline void scale_row_at(const X* x, Y* y, size_t n, double m, double inv, const double* s,
                         const double* b) noexcept {
#if BNORM_SIMD_LEVELS
  if constexpr (Vec && (is16<X> || is16<Y>)) return scale_row8(x, y, n, m, inv, s, b);
#endif
  scale_row(x, y, n, m, inv, s, b);
}

// Vec: the explicit AVX2 loops for rows with 16-bit data (Avx2 and Avx512
// levels only).
template <bool Vec, class X, class Y>
inline void rows_body(const X* x, Y* y, size_t r0, size_t r1, size_t len, const RowNormParams& p,
                      double* mean, double* inv_std) noexcept {
  for (size_t r = r0; r < r1; ++r) {
    const X* xr = x + r * len;
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();  // statistics of an empty row
    double mu = p.rms ? 0 : nan;
    double var = nan;
    if (len > 0 && p.rms) {
      var = sum_squares_at<Vec>(xr, len) / static_cast<double>(len);
    } else if (len > 0) {
      const detail::Moments m = detail::span_moments(xr, len);
      mu = m.mean();
      var = m.variance();
    }
    const double inv = 1.0 / std::sqrt(var + p.epsilon);
    if (mean != nullptr) mean[r] = mu;
    if (inv_std != nullptr) inv_std[r] = inv;
    const double* b = p.bias == nullptr ? nullptr : p.bias + r * p.bias_stride;
    scale_row_at<Vec>(xr, y + r * len, len, mu, inv, p.scale + r * p.scale_stride, b);
  }
}

template <class X, class Y>
BNORM_ENTRY_GENERIC void rows_generic(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                      const RowNormParams& p, double* mean,
                                      double* inv_std) noexcept {
  rows_body<false>(x, y, r0, r1, len, p, mean, inv_std);
}

template <class X, class Y>
BNORM_ENTRY_AVX2 void rows_avx2(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                const RowNormParams& p, double* mean, double* inv_std) noexcept {
  rows_body<true>(x, y, r0, r1, len, p, mean, inv_std);
}

template <class X, class Y>
BNORM_ENTRY_AVX512 void rows_avx512(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                    const RowNormParams& p, double* mean,
                                    double* inv_std) noexcept {
  rows_body<true>(x, y, r0, r1, len, p, mean, inv_std);
}

}  // namespace

template <class X, class Y>
void norm_rows(const X* x, Y* y, size_t rows, size_t len, const RowNormParams& p, double* mean,
               double* inv_std) noexcept {
  const Isa isa = active_isa();
  [[maybe_unused]] const bool bf16_insn = avx512_bf16_active();  // unused where there is no Avx512 level
  // Outputs beyond the streaming threshold (isa.h) may be stored
  // non-temporally (the Avx512 loops of 16-bit RMSNormalization rows do);
  // each thread then fences its stores.
  const bool stream = static_cast<const void*>(x) != static_cast<const void*>(y) &&
                      rows * len * sizeof(Y) >= streaming_threshold_bytes();
  detail::for_row_ranges(rows, rows * len, stream, [&](size_t r0, size_t r1) {
    switch (isa) {
      case Isa::Avx512:
#if BNORM_SIMD_LEVELS
        if constexpr (!std::is_same_v<X, double> && std::is_same_v<Y, bf16>) {
          if (bf16_insn) {
            detail::norm_rows_avx512_bf16(x, y, r0, r1, len, p, mean, inv_std, stream);
            break;
          }
        }
        if constexpr (!std::is_same_v<X, double>) {
          detail::norm_rows_avx512(x, y, r0, r1, len, p, mean, inv_std, stream);
          break;
        }
#endif
        rows_avx512(x, y, r0, r1, len, p, mean, inv_std);
        break;
      case Isa::Avx2: rows_avx2(x, y, r0, r1, len, p, mean, inv_std); break;
      case Isa::Generic: rows_generic(x, y, r0, r1, len, p, mean, inv_std); break;
    }
  });
}

#define BNORM_NORM_ROWS(X, Y)                                                                  \
  template void norm_rows<X, Y>(const X*, Y*, size_t, size_t, const RowNormParams&, double*, \
                                double*) noexcept;
#define BNORM_NORM_ROWS_FROM(X) \
  BNORM_NORM_ROWS(X, float)     \
  BNORM_NORM_ROWS(X, double)    \
  BNORM_NORM_ROWS(X, f16)       \
  BNORM_NORM_ROWS(X, bf16)
BNORM_NORM_ROWS_FROM(float)
BNORM_NORM_ROWS_FROM(double)
BNORM_NORM_ROWS_FROM(f16)
BNORM_NORM_ROWS_FROM(bf16)

}  // namespace bnorm::kernels
