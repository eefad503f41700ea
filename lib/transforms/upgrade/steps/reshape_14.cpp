// Reshape 13 <-> 14: `allowzero` added (default 0: a 0 in the shape copies
// the input's dim; 1: a 0 is a dim of size 0).
//
//   Before (Reshape-14): Reshape(data, shape) allowzero = 1   shape = [2, -1] (constant)
//   After  (Reshape-13): Reshape(data, shape)
//
// Up: nothing (0 is the default and Reshape-13's meaning). Down: allowzero =
// 0 is dropped; allowzero = 1 only changes what a 0 in the shape means, so
// with a constant shape holding no 0 it is dropped too (the same reshape,
// bit for bit); a shape that is not constant, or holds a 0, has no form
// below 14: Error(unsupported) naming the node (ONNX 1.12 has no adapter
// there and asserts).
// Formula: unchanged where allowed, Y = data with the dims of `shape`.
#include <algorithm>

#include "model/attrs.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void reshape_14_up(NormSite&) {}

void reshape_14_down(NormSite& s) {
  if (attr_int(s.node, "allowzero", 0) != 0) {
    const auto shape = s.node.input_size() > 1 ? constant_input(s, 1) : std::nullopt;
    if (!shape) refuse(s, "allowzero = 1 with a shape that is not a constant has no form below version 14");
    const auto v = shape->to_i64();
    if (!v || std::find(v->begin(), v->end(), 0) != v->end()) {
      refuse(s, "allowzero = 1 with a 0 in the shape (a dim of size 0) has no form below version 14");
    }
    s.report.dropped.push_back("allowzero = 1 (the constant shape holds no 0: the same reshape)");
  }
  remove_attr(s.node, "allowzero");
}

}  // namespace

const Step reshape_14{"reshape_14", "reshape_14", reshape_14_up, reshape_14_down};

}  // namespace bnorm::steps
