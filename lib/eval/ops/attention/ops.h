// The op functions of Attention and RotaryEmbedding (one per behaviour; their versions are the rows of
// register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_attention(const OpContext& ctx);
Tensors op_rotary_embedding(const OpContext& ctx);

}  // namespace bnorm::eval
