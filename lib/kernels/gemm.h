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

}  // namespace bnorm::kernels
