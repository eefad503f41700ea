// The versions of the activation functions bnorm implements: one row per behaviour, each a closed range of the
// op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/activation/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_activation_ops(OpRegistry& r) {
  r.add("Celu", 12, 28, op_activation);  // 28: float16, bfloat16 and double too
  r.add("Clip", 1, 13, op_activation);
  r.add("Elu", 1, 22, op_activation);
  r.add("HardSigmoid", 1, 22, op_activation);
  r.add("HardSwish", 14, 22, op_activation);
  r.add("LeakyRelu", 1, 16, op_activation);
  r.add("Relu", 1, 14, op_activation);
  r.add("Selu", 1, 22, op_activation);
  r.add("Sigmoid", 1, 13, op_activation);
  r.add("Softplus", 1, 22, op_activation);
  r.add("Softsign", 1, 22, op_activation);
  r.add("SwiGLU", 28, 28, op_swiglu);
  r.add("Swish", 24, 24, op_swish);
  r.add("Tanh", 1, 13, op_activation);
  r.add("ThresholdedRelu", 1, 22, op_activation);
}

}  // namespace bnorm::eval
