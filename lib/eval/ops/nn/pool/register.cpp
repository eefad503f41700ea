// The versions of pooling bnorm implements: one row per behaviour, each a closed range of the op's since-
// versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/nn/pool/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_nn_pool_ops(OpRegistry& r) {
  r.add("AveragePool", 1, 22, op_average_pool);
  r.add("GlobalAveragePool", 1, 22, op_global_average_pool);
  r.add("GlobalLpPool", 1, 22, op_global_lp_pool);
  r.add("GlobalMaxPool", 1, 22, op_global_max_pool);
  r.add("LpPool", 1, 22, op_lp_pool);
  r.add("MaxPool", 1, 22, op_max_pool);
  r.add("MaxUnpool", 9, 22, op_max_unpool);
}

}  // namespace bnorm::eval
