// The versions of Attention, RotaryEmbedding and LinearAttention bnorm implements: one row per behaviour, each
// a closed range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/attention/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_attention_ops(OpRegistry& r) {
  r.add("Attention", 23, 25, op_attention);
  r.add("RotaryEmbedding", 23, 23, op_rotary_embedding);
  r.add("LinearAttention", 27, 27, op_linear_attention);
}

}  // namespace bnorm::eval
