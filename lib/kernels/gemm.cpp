// The entry points of gemm.h: the empty cases, the split of C's columns
// (in multiples of 64, a whole number of every level's panels; 256 for
// packed products, whole stripes) or rows (in multiples of 24, whole
// tiles) across OpenMP threads, and the dispatch to the active level's
// loops.
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

// C's parts to OpenMP threads, each part(i0, i1, j0, j1) computing rows
// [i0, i1) and columns [j0, j1): columns in multiples of `step` (a whole
// number of the product's panels) when there are enough for every thread
// (or more of them than of rows), else rows in multiples of 24 (whole
// tiles): a product of few columns and many rows (a Conv on a small image)
// still splits. Small products, and products inside a parallel region,
// run whole on the calling thread. The empty cases and k = 0 are done here.
template <class T, class Part>
void split_product(T* c, size_t ldc, size_t m, size_t n, size_t k, bool accumulate, size_t step,
                   const Part& part) noexcept {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) {
      for (size_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  constexpr size_t kRowStep = 24;
  const size_t steps = (n + step - 1) / step, row_steps = (m + kRowStep - 1) / kRowStep;
  const auto most = static_cast<size_t>(omp_get_max_threads());
  if (most <= 1 || m * n * k < kParallelWork || omp_in_parallel() || std::max(steps, row_steps) <= 1) {
    return part(0, m, 0, n);
  }
  const bool by_columns = steps >= most || steps >= row_steps;
  const size_t parts = by_columns ? steps : row_steps;
  const int threads = static_cast<int>(std::min(parts, most));
#pragma omp parallel num_threads(threads)
  {
    const size_t t = static_cast<size_t>(omp_get_thread_num()), nt = static_cast<size_t>(omp_get_num_threads());
    if (by_columns) {
      const size_t j0 = std::min(n, steps * t / nt * step), j1 = std::min(n, steps * (t + 1) / nt * step);
      if (j1 > j0) part(0, m, j0, j1);
    } else {
      const size_t i0 = std::min(m, row_steps * t / nt * kRowStep), i1 = std::min(m, row_steps * (t + 1) / nt * kRowStep);
      if (i1 > i0) part(i0, i1, 0, n);
    }
  }
}

template <class T>
void gemm_any(const T* a, size_t lda, const T* b, size_t ldb, T* c, size_t ldc, size_t m, size_t n, size_t k,
              bool accumulate) noexcept {
  split_product(c, ldc, m, n, k, accumulate, 64, [&](size_t i0, size_t i1, size_t j0, size_t j1) {
    run_level(a + i0 * lda, lda, b + j0, ldb, c + i0 * ldc + j0, ldc, i1 - i0, j1 - j0, k, accumulate);
  });
}

// The active level's entry for the packed products (a level and width
// pair: the packing's layout).
int packed_layout() noexcept {
  const Isa isa = active_isa();
  return static_cast<int>(isa) * 2 + (isa == Isa::Avx512 && wide_products_active() ? 1 : 0);
}

#define BNORM_PACKED_DISPATCH(call, ...)                                                      \
  switch (active_isa()) {                                                                     \
    case Isa::Avx512:                                                                         \
      if (wide_products_active()) return detail::call##_avx512(__VA_ARGS__);                  \
      return detail::call##_avx512_ymm(__VA_ARGS__);                                          \
    case Isa::Avx2: return detail::call##_avx2(__VA_ARGS__);                                  \
    case Isa::Generic: return detail::call##_generic(__VA_ARGS__);                            \
  }

template <class T>
size_t packed_elements(size_t k, size_t n) noexcept {
  const T* tag = nullptr;
  BNORM_PACKED_DISPATCH(gemm_packed_elements, tag, k, n)
  return 0;
}

template <class T>
size_t packed_depth() noexcept {
  const T* tag = nullptr;
  BNORM_PACKED_DISPATCH(gemm_packed_depth, tag)
  return 1;
}

template <class T>
void pack_level(const T* w, size_t ldw, size_t k, size_t n, T* packed) noexcept {
  BNORM_PACKED_DISPATCH(gemm_pack_transposed, w, ldw, k, n, packed)
}

template <class T>
void packed_level(const T* a, size_t lda, const GemmPacked<T>& b, size_t js, size_t ps, T* c, size_t ldc, size_t m,
                  size_t n, size_t k, bool accumulate) noexcept {
  BNORM_PACKED_DISPATCH(gemm_packed, a, lda, b.data, b.k, b.n, js, ps, c, ldc, m, n, k, accumulate)
}

#undef BNORM_PACKED_DISPATCH

template <class T>
void packed_any(const T* a, size_t lda, const GemmPacked<T>& b, size_t p0, T* c, size_t ldc, size_t m, size_t k,
                bool accumulate) noexcept {
  // 256 columns are a whole number of every level's stripes.
  split_product(c, ldc, m, b.n, k, accumulate, 256, [&](size_t i0, size_t i1, size_t j0, size_t j1) {
    packed_level(a + i0 * lda, lda, b, j0, p0, c + i0 * ldc + j0, ldc, i1 - i0, j1 - j0, k, accumulate);
  });
}

}  // namespace

int gemm_packed_layout() noexcept { return packed_layout(); }
size_t gemm_packed_size(const float*, size_t k, size_t n) noexcept { return packed_elements<float>(k, n); }
size_t gemm_packed_size(const double*, size_t k, size_t n) noexcept { return packed_elements<double>(k, n); }
size_t gemm_packed_depth(const float*) noexcept { return packed_depth<float>(); }
size_t gemm_packed_depth(const double*) noexcept { return packed_depth<double>(); }

void gemm_pack_transposed(const float* w, size_t ldw, size_t k, size_t n, float* packed) noexcept {
  if (k && n) pack_level(w, ldw, k, n, packed);
}
void gemm_pack_transposed(const double* w, size_t ldw, size_t k, size_t n, double* packed) noexcept {
  if (k && n) pack_level(w, ldw, k, n, packed);
}

void gemm_packed(const float* a, size_t lda, const GemmPacked<float>& b, size_t p0, float* c, size_t ldc, size_t m,
                 size_t k, bool accumulate) noexcept {
  packed_any(a, lda, b, p0, c, ldc, m, k, accumulate);
}
void gemm_packed(const double* a, size_t lda, const GemmPacked<double>& b, size_t p0, double* c, size_t ldc, size_t m,
                 size_t k, bool accumulate) noexcept {
  packed_any(a, lda, b, p0, c, ldc, m, k, accumulate);
}

void gemm(const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, size_t m, size_t n,
          size_t k, bool accumulate) noexcept {
  gemm_any(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
}

void gemm(const double* a, size_t lda, const double* b, size_t ldb, double* c, size_t ldc, size_t m, size_t n,
          size_t k, bool accumulate) noexcept {
  gemm_any(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
}

}  // namespace bnorm::kernels
