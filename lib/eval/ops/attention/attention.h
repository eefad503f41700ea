// The transformer ops of opset 23, registered by add_attention_ops (ops.h):
// Attention-23 in attention.cpp, RotaryEmbedding-23 in
// rotary.cpp.
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_attention(const OpContext& ctx);
Tensors op_rotary_embedding(const OpContext& ctx);

}  // namespace bnorm::eval
