// The op functions of gathering, scattering, sorting, selecting and generating indices (one per behaviour; their
// versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_arg_max(const OpContext& ctx);
Tensors op_arg_min(const OpContext& ctx);
Tensors op_compress(const OpContext& ctx);
Tensors op_cum_prod(const OpContext& ctx);
Tensors op_cum_sum(const OpContext& ctx);
Tensors op_eye_like(const OpContext& ctx);
Tensors op_gather_elements(const OpContext& ctx);
Tensors op_gather_nd(const OpContext& ctx);
Tensors op_non_zero(const OpContext& ctx);
Tensors op_one_hot(const OpContext& ctx);
Tensors op_range(const OpContext& ctx);
Tensors op_reverse_sequence(const OpContext& ctx);
Tensors op_scatter_elements(const OpContext& ctx);
Tensors op_scatter_nd(const OpContext& ctx);
Tensors op_tensor_scatter(const OpContext& ctx);
Tensors op_top_k(const OpContext& ctx);
Tensors op_trilu(const OpContext& ctx);
Tensors op_unique(const OpContext& ctx);
Tensors op_non_max_suppression(const OpContext& ctx);

}  // namespace bnorm::eval
