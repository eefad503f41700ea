// Gather/scatter, sorting and generator ops: none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_indexing_ops(OpRegistry&) {}

}  // namespace bnorm::eval
