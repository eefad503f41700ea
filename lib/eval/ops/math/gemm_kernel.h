// The one matrix product the evaluator uses (Gemm, MatMul, Conv,
// ConvTranspose): C[M, N] = A[M, K] * B[K, N] (+ C when accumulating),
// row-major with leading dimensions. kernels::gemm (lib/kernels/gemm.h)
// computes it blocked and vectorized, with the semantics of the plain
// loop: each element summed in k order, every product and every sum
// rounded to T (float for float, float16 and bfloat16 data; double for
// double), no fused multiply-add, the same bits at every SIMD level and
// thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"

namespace bnorm::eval {

template <typename T>
void gemm(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t m, int64_t n, int64_t k,
          bool accumulate) {
  if (m <= 0 || n <= 0) return;
  kernels::gemm(a, static_cast<size_t>(lda), b, static_cast<size_t>(ldb), c, static_cast<size_t>(ldc),
                static_cast<size_t>(m), static_cast<size_t>(n), static_cast<size_t>(k < 0 ? 0 : k), accumulate);
}

}  // namespace bnorm::eval
