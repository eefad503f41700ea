// gather.h: the Avx512 level's loops, and the plain ones for the others
// (memcpy for stride 1, where it is the library's vector copy).
#include "kernels/gather.h"

#include <cstring>

#include "kernels/isa.h"
#include "kernels/simd.h"

namespace bnorm::kernels {

#if BNORM_SIMD_LEVELS
namespace detail {

BNORM_ENTRY_AVX512 void gather_row_avx512(const float* src, size_t stride, size_t n, float* dst) noexcept {
  size_t j = 0;
  if (stride == 1) {
    for (; j + 16 <= n; j += 16) _mm512_storeu_ps(dst + j, _mm512_loadu_ps(src + j));
    if (j < n) {
      const __mmask16 m = static_cast<__mmask16>((1u << (n - j)) - 1);
      _mm512_mask_storeu_ps(dst + j, m, _mm512_maskz_loadu_ps(m, src + j));
    }
    return;
  }
  if (stride == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (; j + 16 <= n; j += 16) {
      const float* s = src + 2 * j;
      // Elements 2j to 2j + 30: the 32nd lane of the pair would be past the last.
      const __m512 lo = _mm512_loadu_ps(s), hi = _mm512_maskz_loadu_ps(0x7FFF, s + 16);
      _mm512_storeu_ps(dst + j, _mm512_permutex2var_ps(lo, even, hi));
    }
  }
  for (; j < n; ++j) dst[j] = src[j * stride];
}

}  // namespace detail
#endif

void gather_row(const float* src, size_t stride, size_t n, float* dst) noexcept {
#if BNORM_SIMD_LEVELS
  if (active_isa() == Isa::Avx512) return detail::gather_row_avx512(src, stride, n, dst);
#endif
  if (stride == 1) {
    if (n) std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  for (size_t j = 0; j < n; ++j) dst[j] = src[j * stride];
}

}  // namespace bnorm::kernels
