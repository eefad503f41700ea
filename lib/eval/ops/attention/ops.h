// The op functions of Attention, RotaryEmbedding and LinearAttention (one per behaviour; their versions are the
// rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_attention(const OpContext& ctx);
Tensors op_rotary_embedding(const OpContext& ctx);
Tensors op_linear_attention(const OpContext& ctx);  // linear_attention.cpp
// ai.onnx.preview.FlexAttention-1 (flex_attention.cpp; registered in run/preview_ops.cpp).
Tensors op_flex_attention(const OpContext& ctx);

}  // namespace bnorm::eval
