// The op functions of the resampling family's own files, registered by
// add_resample_ops (resample.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

// grid_sample.cpp
Tensors op_grid_sample(const OpContext& ctx);
Tensors op_affine_grid(const OpContext& ctx);

// eval/ops/tensor/layout.cpp
Tensors op_depth_to_space(const OpContext& ctx);
Tensors op_space_to_depth(const OpContext& ctx);
Tensors op_center_crop_pad(const OpContext& ctx);
Tensors op_col2im(const OpContext& ctx);

// eval/ops/nn/pool/pool.cpp
Tensors op_global_max_pool(const OpContext& ctx);
Tensors op_global_lp_pool(const OpContext& ctx);
Tensors op_lp_pool(const OpContext& ctx);

// eval/ops/nn/pool/global_lp_unpool.cpp
Tensors op_max_unpool(const OpContext& ctx);

// roi_align.cpp
Tensors op_roi_align(const OpContext& ctx);

// deform_conv.cpp
Tensors op_deform_conv(const OpContext& ctx);

}  // namespace bnorm::eval
