// The versions of convolution bnorm implements: one row per behaviour, each a closed range of the op's since-
// versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/nn/conv/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_nn_conv_ops(OpRegistry& r) {
  r.add("Conv", 1, 22, op_conv);
  r.add("ConvTranspose", 1, 22, op_conv_transpose);
  r.add("CausalConvWithState", 27, 27, op_causal_conv_with_state);
}

}  // namespace bnorm::eval
