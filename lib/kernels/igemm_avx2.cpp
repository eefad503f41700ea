// The 8-bit matrix product of igemm.h at the Avx2 level (see
// igemm_impl.h): int16 pairs multiplied and pair-summed by VPMADDWD (exact:
// no pair leaves int32), 6 rows by 2 vectors of C per tile.
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/igemm_impl.h"

namespace bnorm::kernels::detail {

#if BNORM_SIMD_LEVELS
struct IgemmAvx2Pairs {
  using V = simd::i32x8;
  using PA = int16_t;
  using PB = int16_t;
  static constexpr size_t G = 2;
  __attribute__((target(BNORM_TARGET_AVX2))) static V madd(V acc, int32_t a, V b) noexcept {
    return (V)_mm256_add_epi32((__m256i)acc, _mm256_madd_epi16(_mm256_set1_epi32(a), (__m256i)b));
  }
  __attribute__((target(BNORM_TARGET_AVX2))) static size_t pack(const uint8_t* const* src, size_t at, size_t nr, uint8_t flip,
                                                       PB* dst, uint32_t* sum) noexcept {
    return igemm_pack_pairs_avx2(src, at, nr, flip, dst, sum);
  }
};
#else
using IgemmAvx2Pairs = IgemmPairsPortable<simd::u32x8, simd::i32x8>;
#endif

BNORM_ENTRY_AVX2 void igemm_avx2(const IgemmArgs& g) noexcept { igemm_body<IgemmAvx2Pairs, 6, 2>(g); }

}  // namespace bnorm::kernels::detail
