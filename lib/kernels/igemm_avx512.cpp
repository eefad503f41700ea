// The 8-bit matrix product of igemm.h at the Avx512 level (see
// igemm_impl.h), 12 rows by 2 512-bit vectors of C per tile: int16 pairs
// by VPMADDWD, or, on CPUs with AVX512-VNNI (isa.h: avx512_vnni_active()),
// four bytes a lane by VPDPBUSD (uint8 A' x int8 B', summed into the lane
// without saturation). The same integers either way.
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/igemm_impl.h"

namespace bnorm::kernels::detail {

#if BNORM_SIMD_LEVELS
struct IgemmAvx512Pairs {
  using V = simd::i32x16;
  using PA = int16_t;
  using PB = int16_t;
  static constexpr size_t G = 2;
  __attribute__((target(BNORM_TARGET_AVX512))) static V madd(V acc, int32_t a, V b) noexcept {
    return (V)_mm512_add_epi32((__m512i)acc, _mm512_madd_epi16(_mm512_set1_epi32(a), (__m512i)b));
  }
  __attribute__((target(BNORM_TARGET_AVX512))) static size_t pack(const uint8_t* const* src, size_t at, size_t nr, uint8_t flip,
                                                       PB* dst, uint32_t* sum) noexcept {
    return igemm_pack_pairs_avx2(src, at, nr, flip, dst, sum);
  }
};

struct IgemmAvx512Vnni {
  using V = simd::i32x16;
  using PA = uint8_t;
  using PB = int8_t;
  static constexpr size_t G = 4;
  __attribute__((target(BNORM_TARGET_AVX512_VNNI))) static V madd(V acc, int32_t a, V b) noexcept {
    return (V)_mm512_dpbusd_epi32((__m512i)acc, _mm512_set1_epi32(a), (__m512i)b);
  }
  __attribute__((target(BNORM_TARGET_AVX512_VNNI))) static size_t pack(const uint8_t* const* src, size_t at, size_t nr, uint8_t flip,
                                                       PB* dst, uint32_t* sum) noexcept {
    return igemm_pack_quads_vnni(src, at, nr, flip, dst, sum);
  }
};
#else
using IgemmAvx512Pairs = IgemmPairsPortable<simd::u32x16, simd::i32x16>;
using IgemmAvx512Vnni = IgemmAvx512Pairs;
#endif

BNORM_ENTRY_AVX512 void igemm_avx512(const IgemmArgs& g) noexcept { igemm_body<IgemmAvx512Pairs, 12, 2>(g); }

BNORM_ENTRY_AVX512_VNNI void igemm_avx512_vnni(const IgemmArgs& g) noexcept {
  igemm_body<IgemmAvx512Vnni, 12, 2>(g);
}

}  // namespace bnorm::kernels::detail
