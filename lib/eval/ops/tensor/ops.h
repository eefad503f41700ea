// The op functions of shape, layout, slicing and constants (one per behaviour; their versions are the rows of
// register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_center_crop_pad(const OpContext& ctx);
Tensors op_col2im(const OpContext& ctx);
Tensors op_concat(const OpContext& ctx);
Tensors op_constant(const OpContext& ctx);
Tensors op_constant_of_shape(const OpContext& ctx);
Tensors op_depth_to_space(const OpContext& ctx);
Tensors op_expand(const OpContext& ctx);
Tensors op_flatten(const OpContext& ctx);
Tensors op_gather(const OpContext& ctx);
Tensors op_identity(const OpContext& ctx);
Tensors op_pad(const OpContext& ctx);
Tensors op_reshape(const OpContext& ctx);
Tensors op_shape(const OpContext& ctx);
Tensors op_size(const OpContext& ctx);
Tensors op_slice(const OpContext& ctx);
Tensors op_space_to_depth(const OpContext& ctx);
Tensors op_split(const OpContext& ctx);
Tensors op_squeeze(const OpContext& ctx);
Tensors op_tile(const OpContext& ctx);
Tensors op_transpose(const OpContext& ctx);
Tensors op_unsqueeze(const OpContext& ctx);

}  // namespace bnorm::eval
