// The op functions of Dropout (their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_dropout(const OpContext& ctx);

}  // namespace bnorm::eval
