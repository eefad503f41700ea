#include "eval/ops_control.h"

namespace bnorm::eval {

void add_scan_ops(OpRegistry&) {}

}  // namespace bnorm::eval
