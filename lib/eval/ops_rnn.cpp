// RNN, GRU and LSTM: none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_rnn_ops(OpRegistry&) {}

}  // namespace bnorm::eval
