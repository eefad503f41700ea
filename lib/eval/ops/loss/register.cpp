// The versions of the losses bnorm implements: one row per behaviour, each a closed range of the op's since-
// versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/loss/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_loss_ops(OpRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", 12, 22, op_nll_loss);
  r.add("SoftmaxCrossEntropyLoss", 12, 13, op_softmax_cross_entropy);
}

}  // namespace bnorm::eval
