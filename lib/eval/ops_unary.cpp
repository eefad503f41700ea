// Elementwise math, bitwise and trigonometric ops: none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_unary_ops(OpRegistry&) {}

}  // namespace bnorm::eval
