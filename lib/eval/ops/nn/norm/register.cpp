// The versions of the normalization family bnorm implements: one row per behaviour, each a closed range of the
// op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/nn/norm/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_nn_norm_ops(OpRegistry& r) {
  r.add("BatchNormalization", 1, 15, op_batch_norm);
  r.add("GroupNormalization", 18, 21, op_group_norm);
  r.add("InstanceNormalization", 1, 6, op_instance_norm);
  r.add("InstanceNormalization", 22, 22, op_instance_norm);
  r.add("LRN", 1, 13, op_lrn);
  r.add("LayerNormalization", 17, 17, op_layer_norm);
  r.add("LpNormalization", 1, 22, op_lp_norm);
  r.add("MeanVarianceNormalization", 1, 13, op_mean_variance_norm);
  r.add("RMSNormalization", 23, 23, op_rms_norm);
}

}  // namespace bnorm::eval
