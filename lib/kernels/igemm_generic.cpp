// The 8-bit matrix product of igemm.h at the Generic level (see
// igemm_impl.h): int16 pairs in 32-bit lanes, 4 rows by 2 vectors of C per
// tile; on x86 multiplied and pair-summed by SSE2's PMADDWD (exact: no pair
// leaves int32), elsewhere by the portable shifts and products.
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/igemm_impl.h"

namespace bnorm::kernels::detail {

#if BNORM_X86
struct IgemmSse2Pairs : IgemmPairsPortable<simd::u32x4, simd::i32x4> {
  using V = simd::u32x4;
  static V madd(V acc, int32_t a, V b) noexcept {
    return (V)_mm_add_epi32((__m128i)acc, _mm_madd_epi16(_mm_set1_epi32(a), (__m128i)b));
  }
};
#else
using IgemmSse2Pairs = IgemmPairsPortable<simd::u32x4, simd::i32x4>;
#endif

BNORM_ENTRY_GENERIC void igemm_generic(const IgemmArgs& g) noexcept { igemm_body<IgemmSse2Pairs, 4, 2>(g); }

}  // namespace bnorm::kernels::detail
