// The one matrix product the evaluator uses (Gemm, MatMul, Conv,
// ConvTranspose): C[M, N] = A[M, K] * B[K, N] (+ C when accumulating),
// row-major with leading dimensions, summed in k order. Plain loops in
// i-k-j order so the inner loop runs over contiguous rows of B and C;
// rows of C are split across OpenMP threads when the product is large.
#pragma once

#include <cstdint>

namespace bnorm::eval {

template <typename T>
void gemm(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t m, int64_t n, int64_t k,
          bool accumulate) {
#pragma omp parallel for schedule(static) if (m * n * k > (1 << 18))
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (!accumulate) {
      for (int64_t j = 0; j < n; ++j) ci[j] = T(0);
    }
    const T* ai = a + i * lda;
    for (int64_t p = 0; p < k; ++p) {
      const T av = ai[p];
      const T* bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
    }
  }
}

}  // namespace bnorm::eval
