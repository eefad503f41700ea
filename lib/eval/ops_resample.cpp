// The resampling family's registrations beyond op_table.cpp's core rows
// (Resize 10..13, Upsample 1..9 and the pools there). Resize 18..19 reads
// its version in op_resize (ops_resize.cpp); the others live in
// ops_resample_*.cpp and ops_pool*.cpp (declared in ops_resample.h).
#include "eval/ops.h"
#include "eval/ops_resample.h"

namespace bnorm::eval {

void add_resample_ops(OpRegistry& r) {
  r.add("AffineGrid", 20, 20, op_affine_grid);
  r.add("CenterCropPad", 18, 18, op_center_crop_pad);
  r.add("Col2Im", 18, 18, op_col2im);
  r.add("DeformConv", 19, 22, op_deform_conv);
  r.add("DepthToSpace", 1, 13, op_depth_to_space);
  r.add("GlobalLpPool", 1, 22, op_global_lp_pool);
  r.add("GlobalMaxPool", 1, 22, op_global_max_pool);
  r.add("GridSample", 16, 22, op_grid_sample);
  r.add("LpPool", 1, 22, op_lp_pool);
  r.add("MaxUnpool", 9, 22, op_max_unpool);
  r.add("Resize", 18, 19, op_resize);
  r.add("RoiAlign", 10, 22, op_roi_align);
  r.add("SpaceToDepth", 1, 13, op_space_to_depth);
}

}  // namespace bnorm::eval
