// gather.h: the Avx512 level's loops, and the plain ones for the others
// (memcpy for stride 1, where it is the library's vector copy).
#include "kernels/gather.h"

#include <algorithm>
#include <cstring>

#include "kernels/isa.h"
#include "kernels/simd.h"

#if BNORM_SIMD_LEVELS
#include <immintrin.h>
#endif

namespace bnorm::kernels {

#if BNORM_SIMD_LEVELS
namespace detail {

// `n` copies of v.
BNORM_ENTRY_AVX512 inline void fill_avx512(float* dst, size_t n, float v) noexcept {
  const __m512 f = _mm512_set1_ps(v);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) _mm512_storeu_ps(dst + j, f);
  if (j < n) _mm512_mask_storeu_ps(dst + j, static_cast<__mmask16>((1u << (n - j)) - 1), f);
}

BNORM_ENTRY_AVX512 inline void gather_avx512(const float* src, size_t stride, size_t n, float* dst) noexcept {
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

BNORM_ENTRY_AVX512 void gather_row_avx512(const float* src, size_t stride, size_t n, float* dst) noexcept {
  gather_avx512(src, stride, n, dst);
}

}  // namespace detail
#endif

namespace {

// im2col_row's walk over the lines, with the level's fill and gather.
template <class Fill, class Gather>
inline void im2col_lines(const Im2colRow& r, size_t j0, size_t j1, float* dst, Fill fill, Gather gather) noexcept {
  size_t oy = j0 / r.out_w, ox0 = j0 % r.out_w;
  for (size_t j = j0; j < j1; ++oy, ox0 = 0) {
    const size_t ox1 = std::min(r.out_w, ox0 + (j1 - j)), n = ox1 - ox0;
    const ptrdiff_t iy = static_cast<ptrdiff_t>(oy * r.stride_y) + r.off_y;
    if (iy < 0 || iy >= static_cast<ptrdiff_t>(r.in_h)) {
      fill(dst, n, r.pad);
    } else {
      const size_t a = std::min(std::max(r.lo, ox0), ox1), b = std::max(a, std::min(r.hi, ox1));
      fill(dst, a - ox0, r.pad);
      const float* src = r.x + static_cast<size_t>(iy) * r.in_w +
                         static_cast<size_t>(static_cast<ptrdiff_t>(a * r.stride_x) + r.off_x);
      if (b > a) gather(src, r.stride_x, b - a, dst + (a - ox0));
      fill(dst + (b - ox0), ox1 - b, r.pad);
    }
    dst += n;
    j += n;
  }
}

void fill_plain(float* dst, size_t n, float v) noexcept { std::fill(dst, dst + n, v); }

void gather_plain(const float* src, size_t stride, size_t n, float* dst) noexcept {
  if (stride == 1) {
    std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  for (size_t j = 0; j < n; ++j) dst[j] = src[j * stride];
}

}  // namespace

#if BNORM_SIMD_LEVELS
namespace detail {

BNORM_ENTRY_AVX512 void im2col_row_avx512(const Im2colRow& r, size_t j0, size_t j1, float* dst) noexcept {
  im2col_lines(r, j0, j1, dst, fill_avx512, gather_avx512);
}

}  // namespace detail
#endif

void im2col_row(const Im2colRow& r, size_t j0, size_t j1, float* dst) noexcept {
#if BNORM_SIMD_LEVELS
  if (active_isa() == Isa::Avx512) return detail::im2col_row_avx512(r, j0, j1, dst);
#endif
  im2col_lines(r, j0, j1, dst, fill_plain, gather_plain);
}

namespace {

// The elements of the tile [i0, i1) x [j0, j1) one by one.
inline void transpose_plain(const float* a, size_t lda, float* b, size_t ldb, size_t i0, size_t i1, size_t j0,
                            size_t j1) noexcept {
  for (size_t i = i0; i < i1; ++i)
    for (size_t j = j0; j < j1; ++j) b[j * ldb + i] = a[i * lda + j];
}

// Tiles of 64 x 64 (16 KiB read, 16 KiB written: in L1), each by `block`
// (8 x 8 at a time) and its ragged edges one by one.
template <class Block>
inline void transpose_tiles(const float* a, size_t rows, size_t cols, size_t lda, float* b, size_t ldb,
                            Block block) noexcept {
  constexpr size_t kTile = 64;
  for (size_t i0 = 0; i0 < rows; i0 += kTile)
    for (size_t j0 = 0; j0 < cols; j0 += kTile) {
      const size_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      const size_t ie = i0 + (i1 - i0) / 8 * 8, je = j0 + (j1 - j0) / 8 * 8;
      for (size_t i = i0; i < ie; i += 8)
        for (size_t j = j0; j < je; j += 8) block(a + i * lda + j, lda, b + j * ldb + i, ldb);
      transpose_plain(a, lda, b, ldb, i0, ie, je, j1);
      transpose_plain(a, lda, b, ldb, ie, i1, j0, j1);
    }
}

}  // namespace

#if BNORM_SIMD_LEVELS
namespace detail {

// One 8 x 8 block: unpack pairs of rows, shuffle quads, swap 128-bit halves.
struct Block8Avx2 {
  __attribute__((target(BNORM_TARGET_AVX2))) void operator()(const float* s, size_t ls, float* d,
                                                              size_t ld) const noexcept {
    __m256 r[8], t[8];
    for (size_t k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * ls);
    for (size_t k = 0; k < 8; k += 2) {
      t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
      t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (size_t k = 0; k < 8; k += 4) {
      r[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (size_t k = 0; k < 4; ++k) {
      _mm256_storeu_ps(d + k * ld, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
      _mm256_storeu_ps(d + (k + 4) * ld, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
    }
  }
};

BNORM_ENTRY_AVX2 void transpose_avx2(const float* a, size_t rows, size_t cols, size_t lda, float* b,
                                     size_t ldb) noexcept {
  transpose_tiles(a, rows, cols, lda, b, ldb, Block8Avx2{});
}

}  // namespace detail
#endif

void transpose(const float* a, size_t rows, size_t cols, size_t lda, float* b, size_t ldb) noexcept {
#if BNORM_SIMD_LEVELS
  if (active_isa() != Isa::Generic) return detail::transpose_avx2(a, rows, cols, lda, b, ldb);
#endif
  transpose_tiles(a, rows, cols, lda, b, ldb, [](const float* s, size_t ls, float* d, size_t ld) {
    for (size_t i = 0; i < 8; ++i)
      for (size_t j = 0; j < 8; ++j) d[j * ld + i] = s[i * ls + j];
  });
}

void gather_row(const float* src, size_t stride, size_t n, float* dst) noexcept {
#if BNORM_SIMD_LEVELS
  if (active_isa() == Isa::Avx512) return detail::gather_row_avx512(src, stride, n, dst);
#endif
  if (n) gather_plain(src, stride, n, dst);
}

}  // namespace bnorm::kernels
