// Reshape across 5: the shape moves from an attribute to an input.
//
//   Reshape-1: Reshape(data) shape = [..]
//   Reshape-5: Reshape(data, shape)        int64 1-D input
//
// Up: the `shape` attribute becomes an int64 initializer (ONNX 1.12's
// adapter writes an int64 Constant node, which opsets 5-8 do not allow:
// Constant-1 has only float types). Down: the shape input must be a
// constant (Error naming the node and the input otherwise; ONNX 1.12's
// adapter asserts, ir.h eraseOutput) and becomes the attribute; allowzero
// (14) must be 0 (dropped). Element types must exist at the target.
// Formula: unchanged (0 copies the input's dim, -1 is inferred, at both).
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void reshape_5_convert(NormSite& s) {
  const int to = schema_version("Reshape", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version < 5 && to >= 5) {
    const auto* a = find_attr(n, "shape");
    const std::vector<int64_t> shape = a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
    remove_attr(n, "shape");
    remove_attr(n, "consumed_inputs");
    set_input(n, 1, s.add_int64s(s.stem() + "_shape", shape));
    s.report.set.push_back(fmt::format("shape as input '{}'", n.input(1)));
  } else if (s.version >= 5 && to < 5) {
    refuse_missing_types(s, to);
    if (attr_int(n, "allowzero", 0) != 0) refuse(s, "allowzero = 1 has no form below version 14");
    if (n.input_size() < 2 || n.input(1).empty()) refuse(s, "the shape input is missing");
    const std::vector<int64_t> shape = constant_ints(s, 1, "shape", "become an attribute below version 5");
    remove_attr(n, "allowzero");
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    set_ints(n, "shape", shape);
    s.report.set.push_back("shape as an attribute");
  }
  s.version = to;
}

const Step reshape_5{"reshape_5", "reshape_5", reshape_5_convert, reshape_5_convert};

}  // namespace bnorm::steps
