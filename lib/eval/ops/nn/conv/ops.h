// The op functions of convolution (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_conv(const OpContext& ctx);
Tensors op_conv_transpose(const OpContext& ctx);
Tensors op_causal_conv_with_state(const OpContext& ctx);  // causal_conv_with_state.cpp

}  // namespace bnorm::eval
