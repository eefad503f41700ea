// The op functions of quantization and the integer ops (one per behaviour; their versions are the rows of
// register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_conv_integer(const OpContext& ctx);
Tensors op_dequantize_linear(const OpContext& ctx);
Tensors op_dynamic_quantize_linear(const OpContext& ctx);
Tensors op_matmul_integer(const OpContext& ctx);
Tensors op_qlinear_conv(const OpContext& ctx);
Tensors op_qlinear_matmul(const OpContext& ctx);
Tensors op_quantize_linear(const OpContext& ctx);

}  // namespace bnorm::eval
