// The op functions of the normalization family (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_batch_norm(const OpContext& ctx);
Tensors op_group_norm(const OpContext& ctx);
Tensors op_instance_norm(const OpContext& ctx);
Tensors op_layer_norm(const OpContext& ctx);
Tensors op_lp_norm(const OpContext& ctx);
Tensors op_lrn(const OpContext& ctx);
Tensors op_mean_variance_norm(const OpContext& ctx);
Tensors op_rms_norm(const OpContext& ctx);

}  // namespace bnorm::eval
