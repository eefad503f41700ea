// The versions of sequences bnorm implements: one row per behaviour, each a closed range of the op's since-
// versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/sequence/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_sequence_ops(OpRegistry& r) {
  r.add("ConcatFromSequence", 11, 11, op_concat_from_sequence);
  r.add("SequenceAt", 11, 11, op_sequence_at);
  r.add("SequenceConstruct", 11, 11, op_sequence_construct);
  r.add("SequenceEmpty", 11, 11, op_sequence_empty);
  r.add("SequenceErase", 11, 11, op_sequence_erase);
  r.add("SequenceInsert", 11, 11, op_sequence_insert);
  r.add("SequenceLength", 11, 11, op_sequence_length);
  r.add("SplitToSequence", 11, 24, op_split_to_sequence);
}

}  // namespace bnorm::eval
