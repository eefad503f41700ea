// The versions of shape, layout, slicing and constants bnorm implements: one row per behaviour, each a closed
// range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/tensor/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_tensor_ops(OpRegistry& r) {
  r.add("CenterCropPad", 18, 18, op_center_crop_pad);
  r.add("Col2Im", 18, 18, op_col2im);
  r.add("Concat", 1, 13, op_concat);
  r.add("Constant", 1, 25, op_constant);
  r.add("ConstantOfShape", 9, 25, op_constant_of_shape);
  r.add("DepthToSpace", 1, 13, op_depth_to_space);
  r.add("Expand", 8, 13, op_expand);
  r.add("Flatten", 1, 25, op_flatten);
  r.add("Gather", 1, 13, op_gather);
  r.add("Identity", 1, 25, op_identity);
  r.add("Pad", 1, 25, op_pad);
  r.add("Reshape", 1, 25, op_reshape);
  r.add("Shape", 1, 25, op_shape);
  r.add("Size", 1, 25, op_size);
  r.add("Slice", 1, 13, op_slice);
  r.add("SpaceToDepth", 1, 13, op_space_to_depth);
  r.add("Split", 1, 18, op_split);
  r.add("Squeeze", 1, 25, op_squeeze);
  r.add("Tile", 1, 13, op_tile);
  r.add("Transpose", 1, 25, op_transpose);
  r.add("Unsqueeze", 1, 25, op_unsqueeze);
}

}  // namespace bnorm::eval
