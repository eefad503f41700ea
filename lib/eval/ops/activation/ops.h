// The op functions of the activation functions (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_activation(const OpContext& ctx);
Tensors op_swish(const OpContext& ctx);
Tensors op_swiglu(const OpContext& ctx);

}  // namespace bnorm::eval
