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

}  // namespace bnorm::kernels
