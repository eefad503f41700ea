#include "eval/ops_control.h"

namespace bnorm::eval {

void add_sequence_ops(OpRegistry&) {}

}  // namespace bnorm::eval
