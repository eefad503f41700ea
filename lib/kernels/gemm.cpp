// The entry points of gemm.h: the empty cases, the split of C's columns
// (in multiples of 64, a whole number of every level's panels) or rows (in
// multiples of 24, whole tiles) across OpenMP threads, and the dispatch to
// the active level's loops.
#include "kernels/gemm.h"

#include <omp.h>

#include <algorithm>

#include "kernels/gemm_impl.h"
#include "kernels/isa.h"

namespace bnorm::kernels {
namespace {

// Below this many multiply-adds a product runs on the calling thread.
constexpr size_t kParallelWork = size_t{1} << 21;

template <class T>
void run_level(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m, size_t n, size_t k,
               bool accumulate) noexcept {
  switch (active_isa()) {
    case Isa::Avx512:
      if (wide_products_active()) return detail::gemm_avx512(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
      return detail::gemm_avx512_ymm(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
    case Isa::Avx2: return detail::gemm_avx2(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
    case Isa::Generic: return detail::gemm_generic(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
  }
}

template <class T>
void gemm_any(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m, size_t n, size_t k,
              bool accumulate) noexcept {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) {
      for (size_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  constexpr size_t kStep = 64, kRowStep = 24;
  const size_t steps = (n + kStep - 1) / kStep, row_steps = (m + kRowStep - 1) / kRowStep;
  const auto most = static_cast<size_t>(omp_get_max_threads());
  if (most <= 1 || m * n * k < kParallelWork || omp_in_parallel() || std::max(steps, row_steps) <= 1) {
    return run_level(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
  }
  // Columns when there are enough for every thread (or more of them than
  // of rows), else rows: a product of few columns and many rows (a Conv on
  // a small image) still splits.
  const bool by_columns = steps >= most || steps >= row_steps;
  const size_t parts = by_columns ? steps : row_steps;
  const int threads = static_cast<int>(std::min(parts, most));
#pragma omp parallel num_threads(threads)
  {
    const size_t t = static_cast<size_t>(omp_get_thread_num()), nt = static_cast<size_t>(omp_get_num_threads());
    if (by_columns) {
      const size_t j0 = std::min(n, steps * t / nt * kStep), j1 = std::min(n, steps * (t + 1) / nt * kStep);
      if (j1 > j0) run_level(a, lda, b + j0, ldb, c + j0, ldc, m, j1 - j0, k, accumulate);
    } else {
      const size_t i0 = std::min(m, row_steps * t / nt * kRowStep), i1 = std::min(m, row_steps * (t + 1) / nt * kRowStep);
      if (i1 > i0) run_level(a + i0 * lda, lda, b, ldb, c + i0 * ldc, ldc, i1 - i0, n, k, accumulate);
    }
  }
}

}  // namespace

void gemm(const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, size_t m, size_t n,
          size_t k, bool accumulate) noexcept {
  gemm_any(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
}

void gemm(const double* a, size_t lda, const double* b, size_t ldb, double* c, size_t ldc, size_t m, size_t n,
          size_t k, bool accumulate) noexcept {
  gemm_any(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
}

}  // namespace bnorm::kernels
