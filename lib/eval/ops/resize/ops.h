// The op functions of resizing and resampling (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_affine_grid(const OpContext& ctx);
Tensors op_deform_conv(const OpContext& ctx);
Tensors op_grid_sample(const OpContext& ctx);
Tensors op_resize(const OpContext& ctx);
Tensors op_roi_align(const OpContext& ctx);
Tensors op_upsample(const OpContext& ctx);

}  // namespace bnorm::eval
