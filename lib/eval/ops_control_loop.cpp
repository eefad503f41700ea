#include "eval/ops_control.h"

namespace bnorm::eval {

void add_loop_ops(OpRegistry&) {}

}  // namespace bnorm::eval
