// The versions of reductions and Softmax bnorm implements: one row per behaviour, each a closed range of the
// op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/reduction/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_reduction_ops(OpRegistry& r) {
  r.add("LogSoftmax", 1, 13, op_log_softmax);
  r.add("ReduceL1", 1, 18, op_reduce_l1);
  r.add("ReduceL2", 1, 18, op_reduce_l2);
  r.add("ReduceLogSum", 1, 18, op_reduce_log_sum);
  r.add("ReduceLogSumExp", 1, 18, op_reduce_log_sum_exp);
  r.add("ReduceMax", 1, 20, op_reduce_max);
  r.add("ReduceMean", 1, 18, op_reduce_mean);
  r.add("ReduceMin", 1, 20, op_reduce_min);
  r.add("ReduceProd", 1, 18, op_reduce_prod);
  r.add("ReduceSum", 1, 13, op_reduce_sum);
  r.add("ReduceSumSquare", 1, 18, op_reduce_sum_square);
  r.add("Softmax", 1, 13, op_softmax);
}

}  // namespace bnorm::eval
