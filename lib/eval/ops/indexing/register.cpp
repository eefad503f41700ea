// The versions of gathering, scattering, sorting, selecting and generating indices bnorm implements: one row per
// behaviour, each a closed range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of
// every family).
#include "eval/ops/indexing/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_indexing_ops(OpRegistry& r) {
  r.add("ArgMax", 1, 13, op_arg_max);
  r.add("ArgMin", 1, 13, op_arg_min);
  r.add("Compress", 9, 11, op_compress);
  r.add("CumProd", 26, 26, op_cum_prod);
  r.add("CumSum", 11, 14, op_cum_sum);
  r.add("EyeLike", 9, 22, op_eye_like);
  r.add("GatherElements", 11, 13, op_gather_elements);
  r.add("GatherND", 11, 13, op_gather_nd);
  r.add("NonZero", 9, 13, op_non_zero);
  r.add("OneHot", 9, 11, op_one_hot);
  r.add("Range", 11, 27, op_range);
  r.add("ReverseSequence", 10, 10, op_reverse_sequence);
  r.add("Scatter", 9, 9, op_scatter_elements);
  r.add("ScatterElements", 11, 18, op_scatter_elements);
  r.add("ScatterND", 11, 18, op_scatter_nd);
  r.add("TensorScatter", 24, 24, op_tensor_scatter);
  r.add("TopK", 1, 24, op_top_k);
  r.add("Trilu", 14, 14, op_trilu);
  r.add("Unique", 11, 11, op_unique);
  r.add("NonMaxSuppression", 10, 11, op_non_max_suppression);
}

}  // namespace bnorm::eval
