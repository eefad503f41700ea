// Row-major 8-bit matrix product with zero points, the one product behind
// the evaluator's MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv:
//
//   C[i, j] = sum_p (A[i, p] - za[i]) * (B[p, j] - zb[j])     (int32)
//
// A [M, K] and B [K, N] each uint8 or int8; za is per row of A, zb per
// column of B (a per-tensor zero point: step 0). The sum is exact in
// integers and then wrapped to int32 (taken modulo 2^32, as ONNX's "int32
// accumulation" that "may overflow only in 32 bits"); it only wraps when
// K * 255 * 255 passes 2^31, K > 33025. Integer sums are exact in any
// order, so every level, blocking and thread count gives the same C: no
// instruction that saturates is used (no VPMADDUBSW).
//
// How: both operands are first made one kind, A' = A as uint8 (int8 A
// offset by +128) and B' = B as int8 (uint8 B offset by -128), their zero
// points moved alike; then C = S - za' colsum(B') - zb' (rowsum(A') - K za')
// with S = A' B', computed in wrapping 32-bit arithmetic. S is summed by
// VPDPBUSD (AVX512-VNNI: four uint8 x int8 products a lane), or from the
// values widened to int16 pairs by VPMADDWD (AVX2, AVX-512 without VNNI)
// or plain 32-bit lanes (Generic); no product or pair sum there leaves
// int32 (255 * 128 * 4 < 2^31).
//
// Leading dimensions are in elements (lda >= K, ldb >= N, ldc >= N are the
// caller's to ensure). Large products split their columns across OpenMP
// threads. Packed copies of A and B live on the stack, about 140 KiB per
// call (and per thread). Allocates nothing, never throws.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bnorm::kernels {

// One operand: uint8 (is_signed false) or int8 data, and its zero points,
// zero[r * zero_step] for row r of A or column r of B (null: all 0).
struct IgemmOperand {
  const void* data;
  size_t ld;
  bool is_signed;
  const int32_t* zero;
  size_t zero_step;
};

void igemm(const IgemmOperand& a, const IgemmOperand& b, int32_t* c, size_t ldc, size_t m, size_t n,
           size_t k) noexcept;

}  // namespace bnorm::kernels
