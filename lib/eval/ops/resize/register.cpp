// The versions of resizing and resampling bnorm implements: one row per behaviour, each a closed range of the
// op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/resize/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_resize_ops(OpRegistry& r) {
  r.add("AffineGrid", 20, 20, op_affine_grid);
  r.add("DeformConv", 19, 22, op_deform_conv);
  r.add("GridSample", 16, 22, op_grid_sample);
  r.add("Resize", 10, 13, op_resize);
  r.add("Resize", 18, 19, op_resize);
  r.add("RoiAlign", 10, 22, op_roi_align);
  r.add("Upsample", 1, 9, op_upsample);
}

}  // namespace bnorm::eval
