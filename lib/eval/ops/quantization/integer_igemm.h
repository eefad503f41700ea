// The integer products of integer.cpp through kernels::igemm (im2col +
// igemm for the convolutions), for the operands the ONNX ops usually have:
// uint8/int8 data, zero points of the operand's type that are scalars, per
// row of a 2-D A (MatMul), per column of B (MatMul) or per output channel
// (ConvInteger's w). Each fills `acc` (int32, the op's output dims) with
// the exact sums wrapped to int32 and returns true, or returns false,
// computing nothing, for anything else (and when K > max_k, where the
// caller needs sums that cannot wrap): integer.cpp then runs its reference
// path, which also reports malformed inputs.
#pragma once

#include <cstdint>

#include "eval/run/op.h"

namespace bnorm::eval {

// Y = (A - a_zero_point) @ (B - b_zero_point): A [.., M, K] with B [K, N],
// or A and B with the same batch dims.
bool igemm_matmul(const Tensor& a, const Tensor* azp, const Tensor& b, const Tensor* bzp, int64_t max_k, Tensor& acc);

// y = conv(x - x_zero_point, w - w_zero_point) with the node's attributes.
bool igemm_conv(const OpContext& ctx, const Tensor& x, const Tensor* xzp, const Tensor& w, const Tensor* wzp,
                int64_t max_k, Tensor& acc);

// Sums of K products of 8-bit values less their zero points never wrap
// int32 up to this K (255 * 255 * K < 2^31).
constexpr int64_t kIgemmExactK = 33025;

}  // namespace bnorm::eval
