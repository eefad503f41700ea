// The one matrix product the evaluator uses (Gemm, MatMul, Conv,
// ConvTranspose): C[M, N] = A[M, K] * B[K, N] (+ C when accumulating),
// row-major with leading dimensions. kernels::gemm (lib/kernels/gemm.h)
// computes it blocked and vectorized, with the semantics of the plain
// loop: each element summed in k order, each product fused with its sum
// and rounded once to T (float for float, float16 and bfloat16 data;
// double for double), the same bits at every SIMD level and thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/gather.h"
#include "kernels/gemm.h"

namespace bnorm::eval {

template <typename T>
void gemm(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t m, int64_t n, int64_t k,
          bool accumulate) {
  if (m <= 0 || n <= 0) return;
  kernels::gemm(a, static_cast<size_t>(lda), b, static_cast<size_t>(ldb), c, static_cast<size_t>(ldc),
                static_cast<size_t>(m), static_cast<size_t>(n), static_cast<size_t>(k < 0 ? 0 : k), accumulate);
}

// t = the [cols, rows] transpose of row-major v[rows, cols] (rows of v lds
// apart, of t ldt apart: dense by default), in square blocks (a fully
// connected layer's weights are a few MiB: a row at a time, every write
// would miss the cache); floats by kernels::transpose's vectors.
template <typename T>
void transpose_into(const T* v, int64_t rows, int64_t cols, T* t, int64_t lds = -1, int64_t ldt = -1) {
  if (lds < 0) lds = cols;
  if (ldt < 0) ldt = rows;
  if (rows <= 0 || cols <= 0) return;
  if constexpr (std::is_same_v<T, float>) {
    const auto u = [](int64_t x) { return static_cast<size_t>(x); };
    kernels::transpose(v, u(rows), u(cols), u(lds), t, u(ldt));
  } else {
    constexpr int64_t kBlock = 32;
    for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
      const int64_t r1 = std::min(rows, r0 + kBlock);
      for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
        const int64_t c1 = std::min(cols, c0 + kBlock);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) t[c * ldt + r] = v[r * lds + c];
      }
    }
  }
}

}  // namespace bnorm::eval
