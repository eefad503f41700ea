// Control flow, sequences and optionals: none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_control_ops(OpRegistry&) {}

}  // namespace bnorm::eval
