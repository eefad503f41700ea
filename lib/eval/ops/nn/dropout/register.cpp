// The versions of Dropout bnorm implements: one row per behaviour, each a closed range of the op's since-
// versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/nn/dropout/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_nn_dropout_ops(OpRegistry& r) {
  r.add("Dropout", 1, 22, op_dropout);
}

}  // namespace bnorm::eval
