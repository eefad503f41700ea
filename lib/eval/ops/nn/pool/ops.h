// The op functions of pooling (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_average_pool(const OpContext& ctx);
Tensors op_global_average_pool(const OpContext& ctx);
Tensors op_global_lp_pool(const OpContext& ctx);
Tensors op_global_max_pool(const OpContext& ctx);
Tensors op_lp_pool(const OpContext& ctx);
Tensors op_max_pool(const OpContext& ctx);
Tensors op_max_unpool(const OpContext& ctx);

}  // namespace bnorm::eval
