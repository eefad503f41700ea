// The normalization family beyond BatchNormalization and InstanceNormalization: none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_norm_family_ops(OpRegistry&) {}

}  // namespace bnorm::eval
