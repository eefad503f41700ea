// Quantization and integer ops: none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_quant_ops(OpRegistry&) {}

}  // namespace bnorm::eval
