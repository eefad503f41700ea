// max_pool.h: the Avx512 level's vectors and the plain loops.
#include "kernels/max_pool.h"

#include "kernels/isa.h"
#include "kernels/simd.h"

#if BNORM_SIMD_LEVELS
#include <immintrin.h>
#endif

namespace bnorm::kernels {
namespace {

inline void stretch_plain(const float* const* rows, size_t nrows, size_t kw, size_t dx, size_t sx, size_t n,
                          float* y) noexcept {
  for (size_t o = 0; o < n; ++o) {
    float best = rows[0][o * sx];
    for (size_t r = 0; r < nrows; ++r)
      for (size_t kx = (r == 0 ? 1 : 0); kx < kw; ++kx) {
        const float v = rows[r][o * sx + kx * dx];
        best = v > best ? v : best;
      }
    y[o] = best;
  }
}

}  // namespace

#if BNORM_SIMD_LEVELS
namespace detail {

// Elements p[0], p[sx], ..., p[15 * sx] of which the first `count` are
// read (masked): sx 1 or 2 in vector loads, other strides one by one.
__attribute__((target(BNORM_TARGET_AVX512), always_inline)) inline __m512 strided16(const float* p, size_t sx,
                                                                                      __mmask16 mask,
                                                                                      size_t count) noexcept {
  if (sx == 1) return _mm512_maskz_loadu_ps(mask, p);
  if (sx == 2) {
    // Elements 0 .. 2 * count - 2: the first 16 from p, the rest from p + 16.
    const auto bits = [](size_t b) { return static_cast<__mmask16>(b >= 16 ? 0xFFFFu : (1u << b) - 1); };
    const __mmask16 lo = bits(2 * count - 1), hi = bits(count > 8 ? 2 * count - 17 : 0);
    const __m512 a = _mm512_maskz_loadu_ps(lo, p), b = _mm512_maskz_loadu_ps(hi, p + 16);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, even, b);
  }
  alignas(64) float v[16] = {};
  for (size_t l = 0; l < count; ++l) v[l] = p[l * sx];
  return _mm512_load_ps(v);
}

BNORM_ENTRY_AVX512 void max_pool_stretch_avx512(const float* const* rows, size_t nrows, size_t kw, size_t dx,
                                                size_t sx, size_t n, float* y) noexcept {
  for (size_t o = 0; o < n; o += 16) {
    const size_t count = n - o < 16 ? n - o : 16;
    const __mmask16 mask = static_cast<__mmask16>(count == 16 ? 0xFFFF : (1u << count) - 1);
    __m512 best = strided16(rows[0] + o * sx, sx, mask, count);
    for (size_t r = 0; r < nrows; ++r)
      for (size_t kx = (r == 0 ? 1 : 0); kx < kw; ++kx) {
        best = _mm512_max_ps(strided16(rows[r] + o * sx + kx * dx, sx, mask, count), best);
      }
    _mm512_mask_storeu_ps(y + o, mask, best);
  }
}

}  // namespace detail
#endif

void max_pool_stretch(const float* const* rows, size_t nrows, size_t kw, size_t dx, size_t sx, size_t n,
                      float* y) noexcept {
  if (n == 0 || nrows == 0 || kw == 0) return;
#if BNORM_SIMD_LEVELS
  if (active_isa() == Isa::Avx512) return detail::max_pool_stretch_avx512(rows, nrows, kw, dx, sx, n, y);
#endif
  stretch_plain(rows, nrows, kw, dx, sx, n, y);
}

}  // namespace bnorm::kernels
