// One row of an im2col matrix from one row of an image: dst[j] =
// src[j * stride] for j < n (float: the bits are copied, never converted).
// Rows are short (an output row of a CNN: 7 to a few hundred elements) and
// there are very many of them, so a call costs a few instructions: vector
// copies with a masked tail at the Avx512 level, and stride 2 (strided
// convolutions) as two loads and one permutation per 16 elements. Reads
// src[0], src[stride], ..., src[(n - 1) * stride] and nothing past the last.
#pragma once

#include <cstddef>

namespace bnorm::kernels {

void gather_row(const float* src, size_t stride, size_t n, float* dst) noexcept;

// One row of a 2-D convolution's im2col matrix (one input channel and one
// kernel offset), its positions [j0, j1) of the output's lines of out_w:
//   dst[j - j0] = x[iy * in_w + ix]  with iy = (j / out_w) * stride_y + off_y,
//                                        ix = (j % out_w) * stride_x + off_x,
//   `pad` where iy is outside [0, in_h) or the output column outside
//   [lo, hi) (the columns whose ix is inside [0, in_w): the caller's).
// The lines are walked here, with gather_row's copies inlined, rather than
// one call per line: an image of 7 to 56 columns has very many lines.
struct Im2colRow {
  const float* x;  // the channel's plane, in_h x in_w (may be null when in_h is 0)
  size_t in_h, in_w, out_w, stride_y, stride_x;
  ptrdiff_t off_y, off_x;  // the kernel offset times the dilation, minus the padding
  size_t lo, hi;           // the output columns inside the image
  float pad;
};
void im2col_row(const Im2colRow& r, size_t j0, size_t j1, float* dst) noexcept;

// b = the transpose of a: b[j * ldb + i] = a[i * lda + j] for i < rows,
// j < cols (the bits copied). 8 x 8 blocks in vector registers at the
// Avx2 and Avx512 levels, in cache-sized tiles. a and b must not overlap.
void transpose(const float* a, size_t rows, size_t cols, size_t lda, float* b, size_t ldb) noexcept;

}  // namespace bnorm::kernels
