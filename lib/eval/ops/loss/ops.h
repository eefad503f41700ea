// The op functions of the losses (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_nll_loss(const OpContext& ctx);
Tensors op_softmax_cross_entropy(const OpContext& ctx);

}  // namespace bnorm::eval
