// The op functions of reductions and Softmax (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_log_softmax(const OpContext& ctx);
Tensors op_reduce_l1(const OpContext& ctx);
Tensors op_reduce_l2(const OpContext& ctx);
Tensors op_reduce_log_sum(const OpContext& ctx);
Tensors op_reduce_log_sum_exp(const OpContext& ctx);
Tensors op_reduce_max(const OpContext& ctx);
Tensors op_reduce_mean(const OpContext& ctx);
Tensors op_reduce_min(const OpContext& ctx);
Tensors op_reduce_prod(const OpContext& ctx);
Tensors op_reduce_sum(const OpContext& ctx);
Tensors op_reduce_sum_square(const OpContext& ctx);
Tensors op_softmax(const OpContext& ctx);

}  // namespace bnorm::eval
