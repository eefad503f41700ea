// The versions of the experimental ops of opsets 1..9 bnorm implements: one row per behaviour, each a closed
// range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/experimental/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_experimental_ops(OpRegistry& r) {
  r.add("Affine", 1, 1, op_affine);
  r.add("ConstantFill", 1, 1, op_constant_fill);
  r.add("Crop", 1, 1, op_crop);
  r.add("DynamicSlice", 1, 1, op_dynamic_slice);
  r.add("GivenTensorFill", 1, 1, op_given_tensor_fill);
  r.add("ImageScaler", 1, 1, op_image_scaler);
  r.add("ParametricSoftplus", 1, 1, op_parametric_softplus);
  r.add("Scale", 1, 1, op_scale);
  r.add("ScaledTanh", 1, 1, op_scaled_tanh);
}

}  // namespace bnorm::eval
