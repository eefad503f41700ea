// The op functions of matrix products, Einsum, Det and Hardmax (one per behaviour; their versions are the rows
// of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_det(const OpContext& ctx);
Tensors op_gemm(const OpContext& ctx);
Tensors op_hardmax(const OpContext& ctx);
Tensors op_matmul(const OpContext& ctx);
Tensors op_einsum(const OpContext& ctx);

}  // namespace bnorm::eval
