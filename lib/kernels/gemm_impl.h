// The loops of gemm.h, templated on the vector type (internal: included by
// gemm_<level>.cpp, one translation unit per level, each with FMA
// contraction off: every fused multiply-add is written as one, fmadd()).
// gemm.cpp splits the columns across threads and calls the active level's
// gemm_<level> on each part.
//
// Blocking: B is copied, KC rows by 8 panels of NR columns at a time
// (NR = NV vectors, zero-padded past N), into a block on the stack that
// stays in L2; then A, MR rows by KC at a time, into a small pack whose
// rows never share a cache set; each panel then runs against it with the
// MR x NR block of C in registers. Past the first KC rows of B the tile
// reloads C and goes on adding, so each element still sums in p order.
// Rows past a multiple of MR take tiles of 4, 2 and 1 rows; columns past
// the last full panel go through a copy of the C tile. Products of one or
// two rows skip the packing (gemm_few_rows).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/gemm.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {

// Rows of B per panel: the panel is 16 KiB at every level and type.
template <class V, size_t NV>
constexpr size_t gemm_kc() noexcept {
  return 16384 / sizeof(V) / NV;
}

// Row stride of the packed rows of A: KC plus a cache line, so that rows
// never share a cache set (a stride that is a multiple of 4 KiB would put
// every row of the tile in one set of L1).
template <class V, size_t NV, class T>
constexpr size_t gemm_as() noexcept {
  return gemm_kc<V, NV>() + 64 / sizeof(T);
}

// C[0..R, 0..NR) (+)= A * panel in registers; A's rows kc long, as apart.
template <class V, size_t R, size_t NV, class T>
inline void gemm_tile(const T* a, size_t as, const T* panel, size_t kc, T* c, size_t ldc, bool load) noexcept {
  constexpr size_t L = simd::lanes<V>(), NR = NV * L;
  V acc[R][NV];
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (size_t v = 0; v < NV; ++v) acc[i][v] = load ? simd::load_bits<V>(c + i * ldc + v * L) : V{};
  for (size_t p = 0; p < kc; ++p) {
    V b[NV];
#pragma GCC unroll 16
    for (size_t v = 0; v < NV; ++v) b[v] = simd::load_bits<V>(panel + p * NR + v * L);
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) {
      const T x = a[i * as + p];
#pragma GCC unroll 16
      for (size_t v = 0; v < NV; ++v) acc[i][v] = simd::fmadd(x, b[v], acc[i][v]);
    }
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (size_t v = 0; v < NV; ++v) simd::store_bits(c + i * ldc + v * L, acc[i][v]);
}

// The same for the first nr < NR columns, through a copy of C's tile.
template <class V, size_t R, size_t NV, class T>
inline void gemm_edge(const T* a, size_t as, const T* panel, size_t kc, T* c, size_t ldc, size_t nr,
                      bool load) noexcept {
  constexpr size_t NR = NV * simd::lanes<V>();
  alignas(64) T tile[R * NR] = {};
  if (load) {
    for (size_t i = 0; i < R; ++i) std::memcpy(tile + i * NR, c + i * ldc, nr * sizeof(T));
  }
  gemm_tile<V, R, NV>(a, as, panel, kc, tile, NR, load);
  for (size_t i = 0; i < R; ++i) std::memcpy(c + i * ldc, tile + i * NR, nr * sizeof(T));
}

// n elements from src to dst in vectors of V (a library memcpy of a few
// hundred bytes costs as much again in its setup: `rep movs` here).
template <class V, class T>
inline void gemm_copy(const T* src, T* dst, size_t n) noexcept {
  constexpr size_t L = simd::lanes<V>();
  size_t j = 0;
  for (; j + L <= n; j += L) simd::store_bits(dst + j, simd::load_bits<V>(src + j));
  for (; j < n; ++j) dst[j] = src[j];
}

// Panels of B per block packed at once: B's rows are read in runs of
// kPanels * NR elements, which the hardware prefetchers follow.
constexpr size_t kPanels = 8;

// R rows of A (from row i) against every panel of the block. The rows are
// copied first to rows gemm_as() apart: rows of A lda apart would all fall
// in one cache set when lda is a multiple of 1024 floats.
template <class V, size_t R, size_t NV, class T>
inline void gemm_rows(const T* a, size_t lda, const T* block, size_t kc, size_t nc, T* c, size_t ldc, bool load,
                      T* apack) noexcept {
  constexpr size_t NR = NV * simd::lanes<V>(), KC = gemm_kc<V, NV>(), AS = gemm_as<V, NV, T>();
  for (size_t i = 0; i < R; ++i) gemm_copy<V>(a + i * lda, apack + i * AS, kc);
  for (size_t q = 0; q * NR < nc; ++q) {
    const size_t nr = std::min(NR, nc - q * NR);
    if (nr == NR) {
      gemm_tile<V, R, NV>(apack, AS, block + q * KC * NR, kc, c + q * NR, ldc, load);
    } else {
      gemm_edge<V, R, NV>(apack, AS, block + q * KC * NR, kc, c + q * NR, ldc, nr, load);
    }
  }
}

// All m rows of A (kc long from ap) against the block's panels: tiles of
// MR rows, then 4, 2 and 1.
template <class V, size_t MR, size_t NV, class T>
inline void gemm_row_tiles(const T* ap, size_t lda, const T* block, size_t kc, size_t nc, T* cp, size_t ldc, size_t m,
                           bool load, T* apack) noexcept {
  size_t i = 0;
  for (; m - i >= MR; i += MR) {
    // The next tile's rows of A are asked for now, while this one
    // computes: each is a short run (kc elements) of a row, which the
    // hardware prefetchers do not follow from one row to the next.
    const size_t next = std::min(m, i + 2 * MR);
    for (size_t r = i + MR; r < next; ++r) {
      const char* row = reinterpret_cast<const char*>(ap + r * lda);
      for (size_t off = 0; off < kc * sizeof(T); off += 64) __builtin_prefetch(row + off, 0, 2);
    }
    gemm_rows<V, MR, NV>(ap + i * lda, lda, block, kc, nc, cp + i * ldc, ldc, load, apack);
  }
  if constexpr (MR > 4) {
    for (; m - i >= 4; i += 4) {
      gemm_rows<V, 4, NV>(ap + i * lda, lda, block, kc, nc, cp + i * ldc, ldc, load, apack);
    }
  }
  if constexpr (MR > 2) {
    if (m - i >= 2) {
      gemm_rows<V, 2, NV>(ap + i * lda, lda, block, kc, nc, cp + i * ldc, ldc, load, apack);
      i += 2;
    }
  }
  if (m - i >= 1) gemm_rows<V, 1, NV>(ap + i * lda, lda, block, kc, nc, cp + i * ldc, ldc, load, apack);
}

template <class V, size_t NR, size_t KC, class T>
inline void gemm_pack_b(const T* b, size_t ldb, size_t kc, size_t nc, T* block) noexcept {
  for (size_t p = 0; p < kc; ++p) {
    const T* row = b + p * ldb;
    for (size_t q = 0; q * NR < nc; ++q) {
      T* dst = block + q * KC * NR + p * NR;
      const size_t nr = std::min(NR, nc - q * NR);
      gemm_copy<V>(row + q * NR, dst, nr);
      std::fill(dst + nr, dst + NR, T(0));
    }
  }
}

// A few rows (a matrix-vector product, a fully connected layer on one
// image): B is read once either way, so it is not packed; each row of C
// adds the rows of B scaled by A's elements, in p order.
template <class T>
inline void gemm_few_rows(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m, size_t n,
                          size_t k, bool accumulate) noexcept {
  for (size_t i = 0; i < m; ++i) {
    T* __restrict ci = c + i * ldc;
    if (!accumulate) std::fill(ci, ci + n, T(0));
    for (size_t p = 0; p < k; ++p) {
      const T x = a[i * lda + p];
      const T* __restrict bp = b + p * ldb;
      for (size_t j = 0; j < n; ++j) ci[j] = std::fma(x, bp[j], ci[j]);
    }
  }
}

template <class V, size_t MR, size_t NV, class T>
inline void gemm_body(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m, size_t n,
                      size_t k, bool accumulate) noexcept {
  if (m < 3) return gemm_few_rows(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
  constexpr size_t NR = NV * simd::lanes<V>(), KC = gemm_kc<V, NV>(), NC = kPanels * NR;
  alignas(64) T block[KC * NC];  // kPanels panels of KC x NR
  alignas(64) T apack[gemm_as<V, NV, T>() * MR];
  for (size_t j0 = 0; j0 < n; j0 += NC) {
    const size_t nc = std::min(NC, n - j0);
    for (size_t p0 = 0; p0 < k; p0 += KC) {
      const size_t kc = std::min(KC, k - p0);
      gemm_pack_b<V, NR, KC>(b + p0 * ldb + j0, ldb, kc, nc, block);
      const bool load = accumulate || p0 > 0;
      gemm_row_tiles<V, MR, NV>(a + p0, lda, block, kc, nc, c + j0, ldc, m, load, apack);
    }
  }
}

// Products with B packed once (gemm.h, gemm_packed): B is stored as the
// blocks gemm_body packs, in the order it runs them, each block padded to
// KC rows: for each stripe of NC columns, for each KC rows, the stripe's
// panels. A stripe of `panels` panels over pk rows takes
// panels * ceil(pk / KC) * KC * NR elements; the stripes before one that
// starts at column j are full, j * ceil(pk / KC) * KC elements together.
template <class V, size_t NV, class T>
constexpr size_t gemm_packed_depth() noexcept {
  return gemm_kc<V, NV>();
}

template <class V, size_t NV, class T>
inline size_t gemm_packed_elements(size_t k, size_t n) noexcept {
  constexpr size_t NR = NV * simd::lanes<V>(), KC = gemm_kc<V, NV>();
  return (n + NR - 1) / NR * NR * ((k + KC - 1) / KC * KC);
}

// The block of rows [pg, pg + KC) of the stripe at column jg (both
// multiples of the block's sides) in a packing of pk rows and pn columns.
template <class V, size_t NV, class T>
inline const T* gemm_packed_block(const T* packed, size_t pk, size_t pn, size_t jg, size_t pg) noexcept {
  constexpr size_t NR = NV * simd::lanes<V>(), KC = gemm_kc<V, NV>(), NC = kPanels * NR;
  const size_t depth = (pk + KC - 1) / KC * KC, panels = (std::min(NC, pn - jg) + NR - 1) / NR;
  return packed + jg * depth + panels * pg * NR;
}

// C[m, n] (+)= A * B's rows [ps, ps + k) and columns [js, js + n) (ps and
// js multiples of KC and NC) as gemm_body computes it, B's blocks read
// where they are packed.
template <class V, size_t MR, size_t NV, class T>
inline void gemm_packed_body(const T* a, size_t lda, const T* packed, size_t pk, size_t pn, size_t js, size_t ps,
                             T* c, size_t ldc, size_t m, size_t n, size_t k, bool accumulate) noexcept {
  constexpr size_t NR = NV * simd::lanes<V>(), KC = gemm_kc<V, NV>(), NC = kPanels * NR;
  alignas(64) T apack[gemm_as<V, NV, T>() * MR];
  for (size_t j0 = 0; j0 < n; j0 += NC) {
    const size_t nc = std::min(NC, n - j0);
    for (size_t p0 = 0; p0 < k; p0 += KC) {
      const size_t kc = std::min(KC, k - p0);
      const T* block = gemm_packed_block<V, NV, T>(packed, pk, pn, js + j0, ps + p0);
      const bool load = accumulate || p0 > 0;
      gemm_row_tiles<V, MR, NV>(a + p0, lda, block, kc, nc, c + j0, ldc, m, load, apack);
    }
  }
}

// B = W^T (W [n, k], rows ldw apart) packed for gemm_packed_body: lane l
// of row p of panel q holds W[q * NR + l, p], 0 past W.
template <class V, size_t NV, class T>
inline void gemm_pack_transposed_body(const T* w, size_t ldw, size_t k, size_t n, T* packed) noexcept {
  constexpr size_t NR = NV * simd::lanes<V>(), KC = gemm_kc<V, NV>(), NC = kPanels * NR;
  for (size_t jg = 0; jg < n; jg += NC)
    for (size_t pg = 0; pg < k; pg += KC) {
      T* block = const_cast<T*>(gemm_packed_block<V, NV, T>(packed, k, n, jg, pg));
      for (size_t q = 0; q * NR < std::min(NC, n - jg); ++q)
        for (size_t l = 0; l < NR; ++l) {
          const size_t row = jg + q * NR + l;
          T* dst = block + q * KC * NR + l;
          for (size_t p = 0; p < KC; ++p) dst[p * NR] = row < n && pg + p < k ? w[row * ldw + pg + p] : T(0);
        }
    }
}

// Declarations carry the level's attributes: a template instantiates with
// those of its first declaration. k > 0 and m, n > 0 (gemm.cpp handles the
// empty cases).
#define BNORM_GEMM_DECLARE_TYPE(level, ENTRY, T)                                                          \
  ENTRY void gemm_##level(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m,      \
                          size_t n, size_t k, bool accumulate) noexcept;                                   \
  ENTRY void gemm_packed_##level(const T* a, size_t lda, const T* packed, size_t pk, size_t pn, size_t js, \
                                 size_t ps, T* c, size_t ldc, size_t m, size_t n, size_t k,                \
                                 bool accumulate) noexcept;                                                \
  ENTRY void gemm_pack_transposed_##level(const T* w, size_t ldw, size_t k, size_t n, T* packed) noexcept;  \
  size_t gemm_packed_elements_##level(const T*, size_t k, size_t n) noexcept;                              \
  size_t gemm_packed_depth_##level(const T*) noexcept;
#define BNORM_GEMM_DECLARE(level, ENTRY)         \
  BNORM_GEMM_DECLARE_TYPE(level, ENTRY, float) \
  BNORM_GEMM_DECLARE_TYPE(level, ENTRY, double)

BNORM_GEMM_DECLARE(generic, BNORM_ENTRY_GENERIC)
BNORM_GEMM_DECLARE(avx2, BNORM_ENTRY_AVX2)
BNORM_GEMM_DECLARE(avx512, BNORM_ENTRY_AVX512)
BNORM_GEMM_DECLARE(avx512_ymm, BNORM_ENTRY_AVX512)

// FV, DV: the float and double vectors of the level; MR rows and NV vectors
// of C per tile, as many as the level's registers hold with B's vectors
// and A's broadcast.
#define BNORM_GEMM_LEVEL_TYPE(level, ENTRY, T, V, MR, NV)                                                  \
  ENTRY void gemm_##level(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m,       \
                          size_t n, size_t k, bool accumulate) noexcept {                                   \
    gemm_body<V, MR, NV>(a, lda, b, ldb, c, ldc, m, n, k, accumulate);                                      \
  }                                                                                                          \
  ENTRY void gemm_packed_##level(const T* a, size_t lda, const T* packed, size_t pk, size_t pn, size_t js,  \
                                 size_t ps, T* c, size_t ldc, size_t m, size_t n, size_t k,                 \
                                 bool accumulate) noexcept {                                                 \
    gemm_packed_body<V, MR, NV>(a, lda, packed, pk, pn, js, ps, c, ldc, m, n, k, accumulate);               \
  }                                                                                                          \
  ENTRY void gemm_pack_transposed_##level(const T* w, size_t ldw, size_t k, size_t n, T* packed) noexcept { \
    gemm_pack_transposed_body<V, NV>(w, ldw, k, n, packed);                                                 \
  }                                                                                                          \
  size_t gemm_packed_elements_##level(const T*, size_t k, size_t n) noexcept {                              \
    return gemm_packed_elements<V, NV, T>(k, n);                                                            \
  }                                                                                                          \
  size_t gemm_packed_depth_##level(const T*) noexcept { return gemm_packed_depth<V, NV, T>(); }
#define BNORM_GEMM_LEVEL(level, ENTRY, FV, DV, MR, NV)     \
  BNORM_GEMM_LEVEL_TYPE(level, ENTRY, float, FV, MR, NV) \
  BNORM_GEMM_LEVEL_TYPE(level, ENTRY, double, DV, MR, NV)

}  // namespace bnorm::kernels::detail
