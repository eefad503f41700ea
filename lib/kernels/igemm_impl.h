// The loops of igemm.h, templated on the SIMD level's multiply-add
// (internal: included by igemm_<level>.cpp, one translation unit per level).
// igemm.cpp splits the columns across threads and calls the active level's
// igemm_<level> on each part.
//
// A level's operation struct O gives: V, a vector of 32-bit lanes, one
// column of C a lane; G, the run of consecutive p one lane multiplies at
// once (2: int16 pairs, 4: bytes); PA and PB, the packed element types of
// A' and B'; madd(acc, a, b), acc + the G products of each lane of b with
// the G elements of A' packed in the 32 bits `a`; and pack(src, at, nr,
// flip, dst, sum), which packs a leading run of columns of G full rows of
// B as igemm_pack_b does with the level's vectors and returns its length.
//
// Blocking, as gemm_impl.h: B' is copied KC rows by 8 panels of NR columns
// (NR = NV lanes-wide vectors) into a block on the stack, each panel in
// groups of G rows (column j's G values side by side, zero-padded past K
// and N), while its column sums are added up; A' is copied MR rows by KC
// into a small pack; each panel then runs against it with the MR x NR block
// of S in registers. When a stretch of columns has seen all of K, the zero
// points' terms are subtracted (igemm.h's formula, wrapping uint32).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/igemm.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {

// igemm's operands made one kind: A' = A ^ a_flip (uint8), B' = B ^ b_flip
// (int8), zero points za' = za + za_add, zb' = zb + zb_add (igemm.cpp).
struct IgemmArgs {
  const uint8_t* a;
  size_t lda;
  uint8_t a_flip;
  const int32_t* za;
  size_t za_step;
  int32_t za_add;
  const uint8_t* b;
  size_t ldb;
  uint8_t b_flip;
  const int32_t* zb;
  size_t zb_step;
  int32_t zb_add;
  int32_t* c;
  size_t ldc, m, n, k;
};

inline uint32_t igemm_za(const IgemmArgs& g, size_t i) noexcept {
  return static_cast<uint32_t>(g.za ? g.za[i * g.za_step] : 0) + static_cast<uint32_t>(g.za_add);
}

inline uint32_t igemm_zb(const IgemmArgs& g, size_t j) noexcept {
  return static_cast<uint32_t>(g.zb ? g.zb[j * g.zb_step] : 0) + static_cast<uint32_t>(g.zb_add);
}

// Groups of G rows per panel: the panel is 16 KiB at every level.
template <class O, size_t NV>
constexpr size_t igemm_kg() noexcept {
  return 16384 / sizeof(typename O::V) / NV;
}

// Row stride of the packed rows of A' (elements): KC plus a cache line,
// so that rows never share a cache set.
template <class O, size_t NV>
constexpr size_t igemm_as() noexcept {
  return igemm_kg<O, NV>() * O::G + 64 / sizeof(typename O::PA);
}

constexpr size_t kIgemmPanels = 8;

// S[0..R, 0..NR) (+)= A' * panel in registers, over kg groups.
template <class O, size_t R, size_t NV>
inline void igemm_tile(const typename O::PA* a, size_t as, const typename O::PB* panel, size_t kg, int32_t* c,
                       size_t ldc, bool load) noexcept {
  using V = typename O::V;
  constexpr size_t L = simd::lanes<V>(), NR = NV * L, G = O::G;
  V acc[R][NV];
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (size_t v = 0; v < NV; ++v) acc[i][v] = load ? simd::load_bits<V>(c + i * ldc + v * L) : V{};
  for (size_t p = 0; p < kg; ++p) {
    V b[NV];
#pragma GCC unroll 16
    for (size_t v = 0; v < NV; ++v) b[v] = simd::load_bits<V>(panel + (p * NR + v * L) * G);
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) {
      int32_t x;
      std::memcpy(&x, a + i * as + p * G, sizeof x);
#pragma GCC unroll 16
      for (size_t v = 0; v < NV; ++v) acc[i][v] = O::madd(acc[i][v], x, b[v]);
    }
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (size_t v = 0; v < NV; ++v) simd::store_bits(c + i * ldc + v * L, acc[i][v]);
}

// The same for the first nr < NR columns, through a copy of S's tile.
template <class O, size_t R, size_t NV>
inline void igemm_edge(const typename O::PA* a, size_t as, const typename O::PB* panel, size_t kg, int32_t* c,
                       size_t ldc, size_t nr, bool load) noexcept {
  constexpr size_t NR = NV * simd::lanes<typename O::V>();
  alignas(64) int32_t tile[R * NR] = {};
  if (load) {
    for (size_t i = 0; i < R; ++i) std::memcpy(tile + i * NR, c + i * ldc, nr * sizeof(int32_t));
  }
  igemm_tile<O, R, NV>(a, as, panel, kg, tile, NR, load);
  for (size_t i = 0; i < R; ++i) std::memcpy(c + i * ldc, tile + i * NR, nr * sizeof(int32_t));
}

// R rows of A' (from row i, columns p0..p0+kc) against every panel.
template <class O, size_t R, size_t NV>
inline void igemm_rows(const IgemmArgs& g, size_t i, size_t p0, size_t kc, const typename O::PB* block, size_t j0,
                       size_t nc, bool load, typename O::PA* apack) noexcept {
  constexpr size_t NR = NV * simd::lanes<typename O::V>(), KG = igemm_kg<O, NV>(), AS = igemm_as<O, NV>();
  constexpr size_t G = O::G;
  const size_t kg = (kc + G - 1) / G;
  for (size_t r = 0; r < R; ++r) {
    const uint8_t* src = g.a + (i + r) * g.lda + p0;
    typename O::PA* dst = apack + r * AS;
    for (size_t p = 0; p < kc; ++p) dst[p] = static_cast<typename O::PA>(static_cast<uint8_t>(src[p] ^ g.a_flip));
    for (size_t p = kc; p < kg * G; ++p) dst[p] = 0;
  }
  int32_t* c = g.c + i * g.ldc + j0;
  for (size_t q = 0; q * NR < nc; ++q) {
    const size_t nr = std::min(NR, nc - q * NR);
    const typename O::PB* panel = block + q * KG * NR * G;
    if (nr == NR) {
      igemm_tile<O, R, NV>(apack, AS, panel, kg, c + q * NR, g.ldc, load);
    } else {
      igemm_edge<O, R, NV>(apack, AS, panel, kg, c + q * NR, g.ldc, nr, load);
    }
  }
}

// Rows p0..p0+kc, columns j0..j0+nc of B' into panels; adds each column's
// values to colsum.
template <class O, size_t NV>
inline void igemm_pack_b(const IgemmArgs& g, size_t p0, size_t kc, size_t j0, size_t nc, typename O::PB* block,
                         uint32_t* colsum) noexcept {
  using PB = typename O::PB;
  constexpr size_t NR = NV * simd::lanes<typename O::V>(), KG = igemm_kg<O, NV>(), G = O::G;
  const uint8_t flip = g.b_flip;
  for (size_t p = 0; p * G < kc; ++p) {
    const size_t rows = std::min(G, kc - p * G);
    const uint8_t* src[G];
    for (size_t r = 0; r < G; ++r) src[r] = g.b + (p0 + p * G + std::min(r, rows - 1)) * g.ldb + j0;
    for (size_t q = 0; q * NR < nc; ++q) {
      PB* __restrict dst = block + (q * KG + p) * NR * G;
      uint32_t* __restrict sum = colsum + q * NR;
      const size_t nr = std::min(NR, nc - q * NR), at = q * NR;
      if (rows == G) {
        for (size_t j = O::pack(src, at, nr, flip, dst, sum); j < nr; ++j) {
          uint32_t s = 0;
#pragma GCC unroll 4
          for (size_t r = 0; r < G; ++r) {
            const auto v = static_cast<int8_t>(src[r][at + j] ^ flip);
            dst[j * G + r] = static_cast<PB>(v);
            s += static_cast<uint32_t>(static_cast<int32_t>(v));
          }
          sum[j] += s;
        }
      } else {
        for (size_t j = 0; j < nr; ++j)
          for (size_t r = 0; r < G; ++r) {
            const auto v = r < rows ? static_cast<int8_t>(src[r][at + j] ^ flip) : int8_t{0};
            dst[j * G + r] = static_cast<PB>(v);
            sum[j] += static_cast<uint32_t>(static_cast<int32_t>(v));
          }
      }
      std::fill(dst + nr * G, dst + NR * G, PB{0});
    }
  }
}

// C[i, j0..j0+nc) = S - za' colsum(B') - zb' (rowsum(A') - K za'), wrapping.
template <size_t NC>
inline void igemm_zero_points(const IgemmArgs& g, size_t j0, size_t nc, const uint32_t* colsum) noexcept {
  uint32_t zb[NC];
  bool any_zb = false;
  for (size_t j = 0; j < nc; ++j) {
    zb[j] = igemm_zb(g, j0 + j);
    any_zb |= zb[j] != 0;
  }
  for (size_t i = 0; i < g.m; ++i) {
    const uint32_t za = igemm_za(g, i);
    uint32_t t = 0;
    if (any_zb) {
      const uint8_t* __restrict ai = g.a + i * g.lda;
      for (size_t p = 0; p < g.k; ++p) t += static_cast<uint8_t>(ai[p] ^ g.a_flip);
      t -= static_cast<uint32_t>(g.k) * za;
    }
    int32_t* __restrict ci = g.c + i * g.ldc + j0;
    for (size_t j = 0; j < nc; ++j) {
      ci[j] = static_cast<int32_t>(static_cast<uint32_t>(ci[j]) - za * colsum[j] - zb[j] * t);
    }
  }
}

// m, n, k > 0 (igemm.cpp handles the empty cases).
template <class O, size_t MR, size_t NV>
inline void igemm_body(const IgemmArgs& g) noexcept {
  constexpr size_t NR = NV * simd::lanes<typename O::V>(), KG = igemm_kg<O, NV>(), KC = KG * O::G;
  constexpr size_t NC = kIgemmPanels * NR;
  alignas(64) typename O::PB block[KC * NC];
  alignas(64) typename O::PA apack[igemm_as<O, NV>() * MR];
  uint32_t colsum[NC];
  for (size_t j0 = 0; j0 < g.n; j0 += NC) {
    const size_t nc = std::min(NC, g.n - j0);
    std::fill(colsum, colsum + nc, 0u);
    for (size_t p0 = 0; p0 < g.k; p0 += KC) {
      const size_t kc = std::min(KC, g.k - p0);
      igemm_pack_b<O, NV>(g, p0, kc, j0, nc, block, colsum);
      const bool load = p0 > 0;
      size_t i = 0;
      for (; g.m - i >= MR; i += MR) igemm_rows<O, MR, NV>(g, i, p0, kc, block, j0, nc, load, apack);
      if constexpr (MR > 4) {
        for (; g.m - i >= 4; i += 4) igemm_rows<O, 4, NV>(g, i, p0, kc, block, j0, nc, load, apack);
      }
      if constexpr (MR > 2) {
        if (g.m - i >= 2) {
          igemm_rows<O, 2, NV>(g, i, p0, kc, block, j0, nc, load, apack);
          i += 2;
        }
      }
      if (g.m - i >= 1) igemm_rows<O, 1, NV>(g, i, p0, kc, block, j0, nc, load, apack);
    }
    igemm_zero_points<NC>(g, j0, nc, colsum);
  }
}

// The portable multiply-add (Generic, and the other levels' names in
// builds without them): G = 2, each 32-bit lane of b an int16 pair, its
// products with A's pair summed in plain 32-bit lanes (U unsigned, I
// signed, the same width).
template <class U, class I>
struct IgemmPairsPortable {
  using V = U;
  using PA = int16_t;
  using PB = int16_t;
  static constexpr size_t G = 2;
  static V madd(V acc, int32_t a, V b) noexcept {
    const I b0 = ((I)(b << 16)) >> 16, b1 = ((I)b) >> 16;
    const int32_t a0 = static_cast<int16_t>(a & 0xFFFF), a1 = a >> 16;
    return acc + (V)(b0 * a0 + b1 * a1);
  }
  static size_t pack(const uint8_t* const*, size_t, size_t, uint8_t, PB*, uint32_t*) noexcept { return 0; }
};

#if BNORM_SIMD_LEVELS
// The packing of B' at the x86 levels, 16 columns at a time: for int16
// pairs (G = 2) with AVX2, and for bytes (G = 4) with AVX512-VNNI, the
// column sums then added by VPDPBUSD with ones.
__attribute__((target(BNORM_TARGET_AVX2))) inline size_t igemm_pack_pairs_avx2(const uint8_t* const* src, size_t at,
                                                                                size_t nr, uint8_t flip, int16_t* dst,
                                                                                uint32_t* sum) noexcept {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  const __m256i ones = _mm256_set1_epi16(1);
  size_t j = 0;
  for (; j + 16 <= nr; j += 16) {
    const __m128i r0 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[0] + at + j)), f);
    const __m128i r1 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[1] + at + j)), f);
    const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(r0, r1));
    const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(r0, r1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * 2), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * 2 + 16), hi);
    auto* s = reinterpret_cast<__m256i*>(sum + j);
    _mm256_storeu_si256(s, _mm256_add_epi32(_mm256_loadu_si256(s), _mm256_madd_epi16(lo, ones)));
    _mm256_storeu_si256(s + 1, _mm256_add_epi32(_mm256_loadu_si256(s + 1), _mm256_madd_epi16(hi, ones)));
  }
  return j;
}

__attribute__((target(BNORM_TARGET_AVX512 ",avx512vnni"))) inline size_t igemm_pack_quads_vnni(
    const uint8_t* const* src, size_t at, size_t nr, uint8_t flip, int8_t* dst, uint32_t* sum) noexcept {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip)), ones = _mm_set1_epi8(1);
  size_t j = 0;
  for (; j + 16 <= nr; j += 16) {
    __m128i r[4];
    for (size_t k = 0; k < 4; ++k) {
      r[k] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[k] + at + j)), f);
    }
    const __m128i t01lo = _mm_unpacklo_epi8(r[0], r[1]), t01hi = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i t23lo = _mm_unpacklo_epi8(r[2], r[3]), t23hi = _mm_unpackhi_epi8(r[2], r[3]);
    const __m128i q[4] = {_mm_unpacklo_epi16(t01lo, t23lo), _mm_unpackhi_epi16(t01lo, t23lo),
                          _mm_unpacklo_epi16(t01hi, t23hi), _mm_unpackhi_epi16(t01hi, t23hi)};
    for (size_t k = 0; k < 4; ++k) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * 4 + k * 16), q[k]);
      auto* s = reinterpret_cast<__m128i*>(sum + j + k * 4);
      _mm_storeu_si128(s, _mm_dpbusd_epi32(_mm_loadu_si128(s), ones, q[k]));
    }
  }
  return j;
}
#endif

#define BNORM_IGEMM_DECLARE(level, ENTRY) ENTRY void igemm_##level(const IgemmArgs& g) noexcept;

BNORM_IGEMM_DECLARE(generic, BNORM_ENTRY_GENERIC)
BNORM_IGEMM_DECLARE(avx2, BNORM_ENTRY_AVX2)
BNORM_IGEMM_DECLARE(avx512, BNORM_ENTRY_AVX512)
BNORM_IGEMM_DECLARE(avx512_vnni, BNORM_ENTRY_AVX512_VNNI)

}  // namespace bnorm::kernels::detail
