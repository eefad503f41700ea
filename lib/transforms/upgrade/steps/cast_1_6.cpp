// Cast 1 <-> 6: the target type `to` was a type name, it is an int.
//
//   Before (Cast-1): Cast(X) to = "FLOAT"
//   After  (Cast-6): Cast(X) to = 1            (TensorProto.DataType)
//
// Preconditions: going up, `to` names a TensorProto data type (Error
// naming the node otherwise). Formula: unchanged. ONNX 1.12's converter
// has no adapter across 6 in either direction; the later Cast changes
// (9: strings, 13: bfloat16) only added types.
#include <fmt/format.h>

#include "core/error.h"
#include "transforms/upgrade/steps/step.h"
#include "model/node_label.h"

namespace bnorm::steps {

void cast_convert(NormSite& s) {
  const auto* to = find_attr(s.node, "to");
  if (!to) throw Error(ErrorKind::input, "attribute 'to' is missing").at_node(node_label(s.node), "Cast", s.version);
  int32_t type = 0;
  if (to->type() == onnx::AttributeProto::STRING) {
    onnx::TensorProto::DataType parsed;
    if (!onnx::TensorProto::DataType_Parse(to->s(), &parsed)) {
      throw Error(ErrorKind::input, fmt::format("attribute 'to' names no data type: '{}'", to->s()))
          .at_node(node_label(s.node), "Cast", s.version);
    }
    type = parsed;
  } else {
    type = static_cast<int32_t>(to->i());
  }
  set_cast_to(s.node, s.target_opset, type);
  s.report.set.push_back(s.target_opset >= 6 ? fmt::format("to = {}", type)
                                              : fmt::format("to = \"{}\"", find_attr(s.node, "to")->s()));
}

const Step cast_1_6{"cast_1_6", "cast_1_6", cast_convert, cast_convert};

}  // namespace bnorm::steps
