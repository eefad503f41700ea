// SIMD building blocks of the kernels (internal: include only from
// lib/kernels/*.cpp). One struct per level of isa.h:
//   Generic  SSE2 (off x86: the compiler's vectors), 4 floats / 2 doubles per vector
//   Avx2     AVX2 + F16C, 8 floats / 4 doubles
//   Avx512   AVX-512 F/BW/DQ/VL, 16 floats / 8 doubles
// Arithmetic is written once, with GCC vector extensions (+ - * / < ?:), in
// templates over these structs; the structs supply only what differs: load
// and store of each storage type (f32, f64, f16, bf16) as the compute
// vector (float, or double for f64), plain or non-temporal.
//
// How a template gets the right instructions: the entry function of a level
// is declared with BNORM_ENTRY_<LEVEL> (the level's target attribute plus
// `flatten`), so every template body it calls is inlined into it and
// compiled for that level. Members of the structs carry the same target.
//
// 16-bit conversions agree bit for bit with half.h. F16C rounds to nearest
// even like f32_to_f16, and encodes a NaN as half.h does (sign and leading
// payload bits kept, quiet bit set). F16C decoding sets the quiet bit of
// signalling NaNs, while f16_to_f32 keeps the bits, so that bit is cleared
// again in lanes whose input had it clear (load_quieted skips that, for
// data that is encoded again, where the encoding sets it anyway).
// bf16 rounds with integer operations (ties to even), or with
// AVX512-BF16's instructions where the CPU has them (Avx512Bf16, in
// simd_avx512_bf16.h). Generic does
// everything with integer and exact float operations (no F16C).
//
// Products that feed a sum are fused where the formula says so, with fma()
// (one rounding): FMA3 at the Avx2 and Avx512 levels, libm's fma lane by
// lane at Generic. Kernel translation units turn FMA contraction off, so
// nothing else is fused and every level rounds the same operations.
#pragma once

// GCC 12's AVX-512 intrinsics start from an "undefined" vector that
// -W(maybe-)uninitialized reports once inlined (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/isa.h"

#if BNORM_X86
#include <immintrin.h>
#endif

// Vector arguments of inlined helpers never cross a real call.
#pragma GCC diagnostic ignored "-Wpsabi"

// prfchw: PREFETCHW (a no-op on the few AVX2 CPUs without it).
#define BNORM_TARGET_AVX2 "avx2,fma,f16c,prfchw"
#define BNORM_TARGET_AVX512 "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,prfchw"
#define BNORM_TARGET_AVX512_BF16 BNORM_TARGET_AVX512 ",avx512bf16"
#define BNORM_TARGET_AVX512_VNNI BNORM_TARGET_AVX512 ",avx512vnni"
#define BNORM_ENTRY_GENERIC __attribute__((flatten))
#if BNORM_SIMD_LEVELS
#define BNORM_ENTRY_AVX2 __attribute__((target(BNORM_TARGET_AVX2), flatten))
#define BNORM_ENTRY_AVX512 __attribute__((target(BNORM_TARGET_AVX512), flatten))
#define BNORM_ENTRY_AVX512_BF16 __attribute__((target(BNORM_TARGET_AVX512_BF16), flatten))
#define BNORM_ENTRY_AVX512_VNNI __attribute__((target(BNORM_TARGET_AVX512_VNNI), flatten))
#else  // clang: the Generic level under every name (isa.h)
#define BNORM_ENTRY_AVX2 BNORM_ENTRY_GENERIC
#define BNORM_ENTRY_AVX512 BNORM_ENTRY_GENERIC
#define BNORM_ENTRY_AVX512_BF16 BNORM_ENTRY_GENERIC
#define BNORM_ENTRY_AVX512_VNNI BNORM_ENTRY_GENERIC
#endif

namespace bnorm::kernels::simd {

typedef float f32x2 __attribute__((vector_size(8)));
typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));
typedef double f64x2 __attribute__((vector_size(16)));
typedef double f64x4 __attribute__((vector_size(32)));
typedef double f64x8 __attribute__((vector_size(64)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
typedef uint32_t u32x4 __attribute__((vector_size(16)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));
typedef uint16_t u16x4 __attribute__((vector_size(8)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef uint16_t u16x16 __attribute__((vector_size(32)));
typedef int16_t i16x4 __attribute__((vector_size(8)));
typedef int16_t i16x8 __attribute__((vector_size(16)));
typedef int16_t i16x16 __attribute__((vector_size(32)));

template <class V>
constexpr size_t lanes() noexcept {
  return sizeof(V) / sizeof(V{}[0]);
}

// Every lane = s (exactly: unlike V{} + s, keeps -0 and NaN payloads).
template <class V, class S>
inline V splat(S s) noexcept {
  V v;
  for (size_t k = 0; k < lanes<V>(); ++k) v[k] = s;
  return v;
}

template <class V, class T>
inline V load_bits(const T* p) noexcept {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T, class V>
inline void store_bits(T* p, const V& v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

// The Generic level's 16-bit conversions, with integer and exact float
// operations only.

// f16 -> f32 as f16_to_f32: subnormals as man * 2^-24 (exact, no denormal
// float involved), exponent 31 keeps sign and payload.
template <class F, class I32, class U32, class U16>
inline F f16_decode_portable(const U16& h16) noexcept {
  const U32 h = __builtin_convertvector(h16, U32);
  const U32 sign = (h & 0x8000u) << 16;
  const U32 exp = h & 0x7C00u;
  const U32 man = h & 0x3FFu;
  const F sub = __builtin_convertvector((I32)man, F) * splat<F>(0x1p-24f);
  const U32 normal = ((h & 0x7FFFu) << 13) + (112u << 23);
  const U32 infnan = (man << 13) | 0x7F800000u;
  const U32 mag = exp == 0u ? (U32)sub : (exp == 0x7C00u ? infnan : normal);
  const U32 bits = mag | sign;
  return (F)bits;
}

// f32 -> f16 as f32_to_f16: round to nearest even, overflow to infinity,
// NaN to sign | 0x7E00 | leading payload bits (as F16C). Subnormal results
// come from adding 0.5f, whose ulp is the f16 subnormal step 2^-24 (the
// float adder does the rounding).
template <class U16, class U32, class F>
inline U16 f16_encode_portable(const F& v) noexcept {
  const U32 b = (U32)v;
  const U32 sign = (b >> 16) & 0x8000u;
  const U32 a = b & 0x7FFFFFFFu;
  const U32 normal = (a - 0x38000000u + 0xFFFu + ((a >> 13) & 1u)) >> 13;
  const F sub_sum = (F)a + splat<F>(0.5f);
  const U32 sub = (U32)sub_sum - 0x3F000000u;
  U32 r = a < 0x38800000u ? sub : normal;
  r = a >= 0x477FF000u ? splat<U32>(0x7C00u) : r;
  r = a > 0x7F800000u ? ((a >> 13) & 0x1FFu) | 0x7E00u : r;
  r |= sign;
  return __builtin_convertvector(r, U16);
}

template <class F, class U32, class U16>
inline F bf16_decode(const U16& h16) noexcept {
  const U32 bits = __builtin_convertvector(h16, U32) << 16;
  return (F)bits;
}

template <class U16, class U32, class F>
inline U16 bf16_encode(const F& v) noexcept {
  const U32 b = (U32)v;
  U32 r = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
  r = (b & 0x7FFFFFFFu) > 0x7F800000u ? (b >> 16) | 0x40u : r;  // NaN: quieted, as half.h
  return __builtin_convertvector(r, U16);
}

template <class V>
inline V fma_lanes(V a, V b, V c) noexcept {
  V r;
  for (size_t k = 0; k < lanes<V>(); ++k) r[k] = std::fma(a[k], b[k], c[k]);
  return r;
}

// x * b + c rounded once, lane by lane, x broadcast (the matrix products:
// gemm_impl.h, conv_plane.cpp): FMA3 on 256-bit and 512-bit vectors at
// the Avx2 and Avx512 levels, libm's fma lane by lane otherwise (the
// Generic level's vectors, and every vector in builds without the levels),
// so every level gives the same bits.
template <class V, class T>
inline V fmadd(T x, V b, V c) noexcept {
  return fma_lanes(splat<V>(x), b, c);
}
#if BNORM_SIMD_LEVELS
#define BNORM_SIMD_FMADD(TARGET, T, V, SET1, FMADD, R)                    \
  __attribute__((target(TARGET))) inline V fmadd(T x, V b, V c) noexcept { \
    return (V)FMADD(SET1(x), (R)b, (R)c);                                  \
  }
BNORM_SIMD_FMADD(BNORM_TARGET_AVX2, float, f32x8, _mm256_set1_ps, _mm256_fmadd_ps, __m256)
BNORM_SIMD_FMADD(BNORM_TARGET_AVX2, double, f64x4, _mm256_set1_pd, _mm256_fmadd_pd, __m256d)
BNORM_SIMD_FMADD(BNORM_TARGET_AVX512, float, f32x16, _mm512_set1_ps, _mm512_fmadd_ps, __m512)
BNORM_SIMD_FMADD(BNORM_TARGET_AVX512, double, f64x8, _mm512_set1_pd, _mm512_fmadd_pd, __m512d)
#undef BNORM_SIMD_FMADD
#endif

struct Generic {
  using F = f32x4;
  using D = f64x2;
  using H = u16x4;
  using FD = f32x2;  // as many floats as D has doubles

  static F load(const float* p) noexcept { return load_bits<F>(p); }
  static D load(const double* p) noexcept { return load_bits<D>(p); }
  static F load(const f16* p) noexcept {
    return f16_decode_portable<F, i32x4, u32x4>(load_bits<H>(p));
  }
  static F load(const bf16* p) noexcept { return bf16_decode<F, u32x4>(load_bits<H>(p)); }
  static F load_quieted(const f16* p) noexcept { return load(p); }
  // a * b + c rounded once, lane by lane (libm's fma: the FMA instruction
  // where the CPU has one, exact software elsewhere).
  static F fma(F a, F b, F c) noexcept { return fma_lanes(a, b, c); }
  static D fma(D a, D b, D c) noexcept { return fma_lanes(a, b, c); }
  static D load_wide(const float* p) noexcept {
    return __builtin_convertvector(load_bits<FD>(p), D);
  }

  static void store(float* p, F v) noexcept { store_bits(p, v); }
  static void store(double* p, D v) noexcept { store_bits(p, v); }
  static void store(f16* p, F v) noexcept { store_bits(p, encode_f16(v)); }
  static void store(bf16* p, F v) noexcept { store_bits(p, bf16_encode<H, u32x4>(v)); }

  // Non-temporal: p aligned to the size of the stored vector (SSE2's
  // streaming stores on x86; plain stores elsewhere, the same bits).
#if BNORM_X86
  static void stream(float* p, F v) noexcept { _mm_stream_ps(p, (__m128)v); }
  static void stream(double* p, D v) noexcept { _mm_stream_pd(p, (__m128d)v); }
#else
  static void stream(float* p, F v) noexcept { store(p, v); }
  static void stream(double* p, D v) noexcept { store(p, v); }
#endif
  static void stream(f16* p, F v) noexcept { stream_half(p, encode_f16(v)); }
  static void stream(bf16* p, F v) noexcept { stream_half(p, bf16_encode<H, u32x4>(v)); }

  static H encode_f16(F v) noexcept { return f16_encode_portable<H, u32x4>(v); }
  static void stream_half(void* p, H h) noexcept {
#if BNORM_X86
    long long bits;
    std::memcpy(&bits, &h, sizeof bits);
    _mm_stream_si64(static_cast<long long*>(p), bits);
#else
    store_bits(p, h);
#endif
  }
};

// Ordering and prefetch hints around the loops: x86's where there is one,
// the compiler's builtins (or nothing) elsewhere.
inline void store_fence() noexcept {
#if BNORM_X86
  _mm_sfence();  // non-temporal stores are weakly ordered
#endif
}
template <int Locality>
inline void prefetch(const void* p) noexcept {
  __builtin_prefetch(p, 0, Locality);
}

#if BNORM_SIMD_LEVELS
#define BNORM_MEMBER static inline __attribute__((target(BNORM_TARGET_AVX2)))

struct Avx2 {
  using F = f32x8;
  using D = f64x4;

  BNORM_MEMBER F load(const float* p) noexcept { return load_bits<F>(p); }
  BNORM_MEMBER D load(const double* p) noexcept { return load_bits<D>(p); }
  BNORM_MEMBER F load(const f16* p) noexcept {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Exponent 31 with the quiet bit clear: F16C set the quiet bit, clear it.
    const __m128i snan = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7E00)),
                                         _mm_set1_epi16(0x7C00));
    const __m256i quiet = _mm256_and_si256(_mm256_cvtepi16_epi32(snan), _mm256_set1_epi32(0x00400000));
    return (F)_mm256_castsi256_ps(_mm256_andnot_si256(quiet, _mm256_castps_si256(_mm256_cvtph_ps(h))));
  }
  BNORM_MEMBER F load_quieted(const f16* p) noexcept {
    return (F)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  BNORM_MEMBER F load(const bf16* p) noexcept {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return (F)_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  BNORM_MEMBER D load_wide(const float* p) noexcept {
    return (D)_mm256_cvtps_pd(_mm_loadu_ps(p));
  }
  BNORM_MEMBER F fma(F a, F b, F c) noexcept {
    return (F)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
  }
  BNORM_MEMBER D fma(D a, D b, D c) noexcept {
    return (D)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
  }

  BNORM_MEMBER void store(float* p, F v) noexcept { store_bits(p, v); }
  BNORM_MEMBER void store(double* p, D v) noexcept { store_bits(p, v); }
  BNORM_MEMBER void store(f16* p, F v) noexcept {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), encode_f16(v));
  }
  BNORM_MEMBER void store(bf16* p, F v) noexcept {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), encode_bf16(v));
  }

  BNORM_MEMBER void stream(float* p, F v) noexcept { _mm256_stream_ps(p, (__m256)v); }
  BNORM_MEMBER void stream(double* p, D v) noexcept { _mm256_stream_pd(p, (__m256d)v); }
  BNORM_MEMBER void stream(f16* p, F v) noexcept {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), encode_f16(v));
  }
  BNORM_MEMBER void stream(bf16* p, F v) noexcept {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), encode_bf16(v));
  }

  // F16C rounds to nearest even and encodes NaN as half.h does.
  BNORM_MEMBER __m128i encode_f16(F v) noexcept {
    return _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  BNORM_MEMBER __m128i encode_bf16(F v) noexcept {
    const __m256i b = _mm256_castps_si256((__m256)v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), odd), 16);
    // NaN: the high half with the quiet bit set (half.h).
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps((__m256)v, (__m256)v, _CMP_UNORD_Q));
    const __m256i quieted = _mm256_or_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, quieted, nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  }
};

#undef BNORM_MEMBER
#define BNORM_MEMBER static inline __attribute__((target(BNORM_TARGET_AVX512)))

struct Avx512 {
  using F = f32x16;
  using D = f64x8;

  BNORM_MEMBER F load(const float* p) noexcept { return load_bits<F>(p); }
  BNORM_MEMBER D load(const double* p) noexcept { return load_bits<D>(p); }
  BNORM_MEMBER F load(const f16* p) noexcept {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    // Exponent 31 with the quiet bit clear: F16C set the quiet bit, clear it.
    const __mmask16 snan = _mm256_cmpeq_epi16_mask(
        _mm256_and_si256(h, _mm256_set1_epi16(0x7E00)), _mm256_set1_epi16(0x7C00));
    const __m512i v = _mm512_castps_si512(_mm512_maskz_cvtph_ps(0xFFFF, h));
    return (F)_mm512_castsi512_ps(
        _mm512_mask_andnot_epi32(v, snan, _mm512_set1_epi32(0x00400000), v));
  }
  BNORM_MEMBER F load_quieted(const f16* p) noexcept {
    return (F)_mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  BNORM_MEMBER F load(const bf16* p) noexcept {
    // Word k of h into the high half of 32-bit lane k, low halves zero.
    const __m512i h = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return (F)_mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(0xAAAAAAAAu, odd_words_index(), h));
  }
  BNORM_MEMBER D load_wide(const float* p) noexcept {
    return (D)_mm512_cvtps_pd(_mm256_loadu_ps(p));
  }
  BNORM_MEMBER F fma(F a, F b, F c) noexcept {
    return (F)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
  }
  BNORM_MEMBER D fma(D a, D b, D c) noexcept {
    return (D)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
  }

  BNORM_MEMBER void store(float* p, F v) noexcept { store_bits(p, v); }
  BNORM_MEMBER void store(double* p, D v) noexcept { store_bits(p, v); }
  BNORM_MEMBER void store(f16* p, F v) noexcept {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), encode_f16(v));
  }
  BNORM_MEMBER void store(bf16* p, F v) noexcept {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), encode_bf16(v));
  }

  BNORM_MEMBER void stream(float* p, F v) noexcept { _mm512_stream_ps(p, (__m512)v); }
  BNORM_MEMBER void stream(double* p, D v) noexcept { _mm512_stream_pd(p, (__m512d)v); }
  BNORM_MEMBER void stream(f16* p, F v) noexcept {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), encode_f16(v));
  }
  BNORM_MEMBER void stream(bf16* p, F v) noexcept {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), encode_bf16(v));
  }

  // F16C rounds to nearest even and encodes NaN as half.h does, so there
  // is no NaN step (the one that made every NaN 0x7E00 held f16 in cache at
  // 0.76 of memcpy, against 0.90 without it: docs/performance.md).
  BNORM_MEMBER __m256i encode_f16(F v) noexcept {
    return _mm512_maskz_cvtps_ph(0xFFFF, (__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  BNORM_MEMBER __m256i encode_bf16(F v) noexcept {
    const __m512 f = (__m512)v;
    const __m512i b = _mm512_castps_si512(f);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7FFF)), odd);
    // NaN: the high half with the quiet bit set (half.h).
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q),
                              _mm512_or_si512(b, _mm512_set1_epi32(0x00400000)));
    // The high halves of the 32-bit lanes, in order, into the low 256 bits.
    const __m512i idx = _mm512_set_epi16(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1,
                                         31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi16(idx, r));
  }
  // Word k of the low 256 bits at word 2k + 1 (for bf16 decoding).
  BNORM_MEMBER __m512i odd_words_index() noexcept {
    return _mm512_set_epi16(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6,
                            5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  }
};

#undef BNORM_MEMBER
#else
using Avx2 = Generic;
using Avx512 = Generic;
#endif

// Elements to handle one by one before p is aligned for stream() of
// vectors of `lanes` elements of T, or SIZE_MAX when p cannot be aligned.
template <class T>
inline size_t elements_to_alignment(const T* p, size_t lanes) noexcept {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  if (addr % sizeof(T) != 0) return SIZE_MAX;
  const uintptr_t align = lanes * sizeof(T);
  return ((align - addr % align) % align) / sizeof(T);
}

}  // namespace bnorm::kernels::simd
