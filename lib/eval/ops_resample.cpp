// The resampling family's registrations beyond op_table.cpp's core rows
// (Resize 10..13, Upsample 1..9 and the pools there): Resize 18..19 reads
// its version in op_resize (ops_resize.cpp).
#include "eval/ops.h"

namespace bnorm::eval {

void add_resample_ops(OpRegistry& r) { r.add("Resize", 18, 19, op_resize); }

}  // namespace bnorm::eval
