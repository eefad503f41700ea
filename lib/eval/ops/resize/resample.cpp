// The resampling family's registrations beyond op_table.cpp's core rows
// (Resize 10..13, Upsample 1..9 and the pools there). Resize 18..19 reads
// its version in op_resize (resize.cpp); the others live in
// ops_resample_*.cpp and ops_pool*.cpp (declared in resample.h).
#include "eval/ops/resize/ops.h"
#include "eval/ops/resize/resample.h"

namespace bnorm::eval {

}  // namespace bnorm::eval
