// The op functions of the experimental ops of opsets 1..9 (one per behaviour; their versions are the rows of
// register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_affine(const OpContext& ctx);
Tensors op_constant_fill(const OpContext& ctx);
Tensors op_crop(const OpContext& ctx);
Tensors op_dynamic_slice(const OpContext& ctx);
Tensors op_given_tensor_fill(const OpContext& ctx);
Tensors op_image_scaler(const OpContext& ctx);
Tensors op_parametric_softplus(const OpContext& ctx);
Tensors op_scale(const OpContext& ctx);
Tensors op_scaled_tanh(const OpContext& ctx);

}  // namespace bnorm::eval
