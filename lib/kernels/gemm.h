// Row-major matrix product C[M, N] = A[M, K] * B[K, N], or C += A * B
// (accumulate), for float and double: the one product behind the
// evaluator's Gemm, MatMul, Conv and ConvTranspose.
//
// Semantics (the same bits as the plain i-k-j loop with std::fma, at every
// SIMD level, vector width and thread count): each C[i, j] starts at 0 (or
// its value when accumulating) and becomes fma(A[i, p], B[p, j], C[i, j])
// for p = 0, 1, ..., K-1 in that order: each product and its sum rounded
// once to T (fused multiply-add), no reordering of the sum. Blocking only
// changes which elements are computed when, never the operations of one
// element. Decided 2026-11-27 (it was two roundings per term before):
// docs/semantics.md.
//
// Leading dimensions are in elements (lda >= K, ldb >= N, ldc >= N are the
// caller's to ensure). A, B and C must not overlap. Large products split
// their columns (or, when they have few, their rows) across OpenMP
// threads; every element is computed by one thread in the order above, so
// the thread count never changes results.
// Packed copies of A and B live on the stack: about 144 KiB of it per call
// (and per OpenMP thread). Allocates nothing, never throws.
#pragma once

#include <cstddef>

namespace bnorm::kernels {

void gemm(const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, size_t m, size_t n,
          size_t k, bool accumulate) noexcept;
void gemm(const double* a, size_t lda, const double* b, size_t ldb, double* c, size_t ldc, size_t m, size_t n,
          size_t k, bool accumulate) noexcept;

// The same product with B packed once and kept (a layer's constant
// weights, used by many products), for a product of few columns computed
// transposed, C^T = B^T A^T, the weights as B. The same bits as gemm: each
// element's fused multiply-adds are the same, in p order.
//
// The packing's layout belongs to the active level (gemm_packed_layout():
// a packing is used only with the layout that made it; callers keep it
// under a key that names it). gemm_pack_transposed packs B = W^T for
// W [n, k] (rows ldw apart) into gemm_packed_size(w, k, n) elements.
template <class T>
struct GemmPacked {
  const T* data;  // gemm_pack_transposed's output
  size_t k, n;    // B's rows and columns
};
int gemm_packed_layout() noexcept;
size_t gemm_packed_size(const float*, size_t k, size_t n) noexcept;
size_t gemm_packed_size(const double*, size_t k, size_t n) noexcept;
void gemm_pack_transposed(const float* w, size_t ldw, size_t k, size_t n, float* packed) noexcept;
void gemm_pack_transposed(const double* w, size_t ldw, size_t k, size_t n, double* packed) noexcept;

// C[M, b.n] (+)= A[M, K] * B's rows [p0, p0 + K): p0 a multiple of
// gemm_packed_depth (the rows of the layout's blocks).
size_t gemm_packed_depth(const float*) noexcept;
size_t gemm_packed_depth(const double*) noexcept;
void gemm_packed(const float* a, size_t lda, const GemmPacked<float>& b, size_t p0, float* c, size_t ldc, size_t m,
                 size_t k, bool accumulate) noexcept;
void gemm_packed(const double* a, size_t lda, const GemmPacked<double>& b, size_t p0, double* c, size_t ldc, size_t m,
                 size_t k, bool accumulate) noexcept;

}  // namespace bnorm::kernels
