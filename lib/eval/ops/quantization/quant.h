// Shared by quant.cpp and integer.cpp.
#pragma once

#include <vector>

#include "eval/run/op.h"

namespace bnorm::eval {

// y[i] = saturate(round_half_even(q[i]) + zp[i]) for y's integer type
// (int8, uint8, int16, uint16, int4, uint4, int2, uint2), or q[i] + zp[i] rounded once
// to y's float8/float4 type with `saturate` (Cast's tables). A NaN quotient
// gives the zero point for integer types. y is allocated with its dims.
void quantize_values(const std::vector<double>& q, const std::vector<double>& zp, Tensor& y, bool saturate);

// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv (integer.cpp).
void add_quant_int_ops(OpRegistry& r);

}  // namespace bnorm::eval
