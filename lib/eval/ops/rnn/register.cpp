// The versions of recurrent networks bnorm implements: one row per behaviour, each a closed range of the op's
// since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/rnn/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_rnn_ops(OpRegistry& r) {
  r.add("GRU", 1, 22, rnn::op_gru);
  r.add("LSTM", 1, 22, rnn::op_lstm);
  r.add("RNN", 1, 22, rnn::op_rnn);
}

}  // namespace bnorm::eval
