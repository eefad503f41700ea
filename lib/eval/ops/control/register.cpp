// The versions of control flow (If, Loop, Scan) and optionals bnorm implements: one row per behaviour, each a
// closed range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/control/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_control_ops(OpRegistry& r) {
  r.add("If", 1, 25, op_if);
  r.add("Loop", 1, 25, op_loop);
  r.add("Optional", 15, 15, op_optional);
  r.add("OptionalGetElement", 15, 18, op_optional_get_element);
  r.add("OptionalHasElement", 15, 18, op_optional_has_element);
  r.add("Scan", 8, 8, op_scan8);
  r.add("Scan", 9, 25, op_scan9);
  r.add("SequenceMap", 17, 17, op_sequence_map);
}

}  // namespace bnorm::eval
