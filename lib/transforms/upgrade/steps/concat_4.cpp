// Concat 1 <-> 4: `axis` became required (it was optional, default 1).
//
//   Before (Concat-1): Concat(a, b)            (axis 1 by default)
//   After  (Concat-4): Concat(a, b) axis = 1
//
// Preconditions: none. Formula: unchanged, the concatenation along `axis`.
// Up: a missing `axis` is written as 1 (ONNX's 3 -> 4 adapter does the same,
// but bnorm converts Concat itself when it crosses 11: axis_11.cpp). Down:
// nothing to do; `axis` is allowed at version 1 and kept.
#include "transforms/upgrade/steps/step.h"

#include "model/attrs.h"

namespace bnorm::steps {

namespace {

void concat_4_up(NormSite& s) {
  if (find_attr(s.node, "axis")) return;
  auto* a = s.node.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
}

void concat_4_down(NormSite&) {}

}  // namespace

const Step concat_4{"concat_4", "concat_4", concat_4_up, concat_4_down};

}  // namespace bnorm::steps
