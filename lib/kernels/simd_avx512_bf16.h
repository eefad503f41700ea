// The Avx512Bf16 level of simd.h (internal: include only from
// lib/kernels/*.cpp that instantiate it, affine_rows_avx512_bf16.cpp):
// Avx512 with bfloat16 rounded by AVX512-BF16's instructions.
#pragma once

#include "kernels/simd.h"

namespace bnorm::kernels::simd {

#if BNORM_SIMD_LEVELS
#define BNORM_MEMBER static inline __attribute__((target(BNORM_TARGET_AVX512_BF16)))

// Avx512 with bfloat16 rounded by VCVTNEPS2BF16 (isa.h's
// avx512_bf16_active()): one instruction per vector where Avx512 spends
// seven integer operations and a permute. The instruction encodes NaN as
// half.h does but flushes float subnormals to zero, so a vector holding one
// (VFPCLASSPS, one test per vector, almost never true) takes Avx512's
// integer rounding instead: the bits are the same as Avx512's.
struct Avx512Bf16 {
  using F = Avx512::F;
  using D = Avx512::D;

  // Avx512's members, forwarded (not inherited: GCC would take same-named
  // members with another target attribute for function versions).
  template <class T>
  BNORM_MEMBER auto load(const T* p) noexcept {
    return Avx512::load(p);
  }
  BNORM_MEMBER F load_quieted(const f16* p) noexcept { return Avx512::load_quieted(p); }
  BNORM_MEMBER D load_wide(const float* p) noexcept { return Avx512::load_wide(p); }
  template <class V>
  BNORM_MEMBER V fma(V a, V b, V c) noexcept {
    return Avx512::fma(a, b, c);
  }
  template <class T, class V>
  BNORM_MEMBER void store(T* p, V v) noexcept {
    if constexpr (std::is_same_v<T, bf16>) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), encode_bf16(v));
    } else {
      Avx512::store(p, v);
    }
  }
  template <class T, class V>
  BNORM_MEMBER void stream(T* p, V v) noexcept {
    if constexpr (std::is_same_v<T, bf16>) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), encode_bf16(v));
    } else {
      Avx512::stream(p, v);
    }
  }

  // Groups of 64 elements (elementwise.h's map_main uses these where a
  // level has them): decoding and rounding two vectors at a time, with no
  // cross-lane word shuffle and one zero test per 64 results. BN bf16 in
  // cache on an AMD EPYC (Zen 4) core: 0.80 of memcpy, against 0.55 for
  // VCVTNEPS2BF16 a vector at a time with a VFPCLASSPS test per vector
  // (docs/performance.md). Single vectors (tails) take store() below.
  //
  // load4: each 32 words are permuted by quadwords so that 128-bit lane j
  // holds quadwords j and j + 4; interleaving words with zero then puts
  // elements 0..15 (low quadwords) and 16..31 (high ones) in the high halves
  // of 32-bit lanes, in order.
  BNORM_MEMBER void load4(const bf16* p, F* v) noexcept {
    const __m512i order = _mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 0);
    const __m512i zero = _mm512_setzero_si512();
    for (int k = 0; k < 2; ++k) {
      const __m512i h = _mm512_permutexvar_epi64(order, _mm512_loadu_si512(p + 32 * k));
      v[2 * k] = (F)_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, h));
      v[2 * k + 1] = (F)_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, h));
    }
  }
  // store4 / stream4: VCVTNE2PS2BF16 rounds two vectors into one, in order.
  // It flushes float subnormals to a signed zero, so a group with any zero
  // result (rare, except where the data are zero) is looked at closer:
  // vectors holding a subnormal take Avx512's integer rounding.
  BNORM_MEMBER void store4(bf16* p, const F* r) noexcept {
    __m512i h[2];
    round4(r, h);
    _mm512_storeu_si512(p, h[0]);
    _mm512_storeu_si512(p + 32, h[1]);
  }
  // p aligned to 32 bytes (map_span's head aligns y for 16-lane vectors).
  BNORM_MEMBER void stream4(bf16* p, const F* r) noexcept {
    __m512i h[2];
    round4(r, h);
    for (int k = 0; k < 2; ++k) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p + 32 * k), _mm512_castsi512_si256(h[k]));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p + 32 * k + 16), _mm512_extracti64x4_epi64(h[k], 1));
    }
  }
  BNORM_MEMBER void round4(const F* r, __m512i* h) noexcept {
    for (int k = 0; k < 2; ++k) {
      h[k] = (__m512i)_mm512_cvtne2ps_pbh((__m512)r[2 * k + 1], (__m512)r[2 * k]);
    }
    const __m512i magnitude = _mm512_set1_epi16(0x7FFF);
    const __mmask32 zeros = _mm512_testn_epi16_mask(h[0], magnitude) |
                            _mm512_testn_epi16_mask(h[1], magnitude);
    if (__builtin_expect(zeros != 0, 0)) {
      for (int k = 0; k < 2; ++k) {
        if ((_mm512_fpclass_ps_mask((__m512)r[2 * k], 0x20) |
             _mm512_fpclass_ps_mask((__m512)r[2 * k + 1], 0x20)) != 0) {
          h[k] = _mm512_inserti64x4(_mm512_castsi256_si512(Avx512::encode_bf16(r[2 * k])),
                                    Avx512::encode_bf16(r[2 * k + 1]), 1);
        }
      }
    }
  }

  BNORM_MEMBER __m256i encode_bf16(F v) noexcept {
    const __m512 f = (__m512)v;
    // VFPCLASSPS category 0x20: denormal, which the instruction flushes to
    // zero. Its NaN encoding is half.h's.
    if (__builtin_expect(_mm512_fpclass_ps_mask(f, 0x20) != 0, 0)) {
      return Avx512::encode_bf16(v);
    }
    return (__m256i)_mm512_cvtneps_pbh(f);
  }
};

#undef BNORM_MEMBER
#else
using Avx512Bf16 = Generic;
#endif

}  // namespace bnorm::kernels::simd
