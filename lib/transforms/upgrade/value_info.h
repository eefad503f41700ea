// Declares the types ONNX's shape inference cannot derive in a converted
// model (outputs of schemas without an inference function, opsets 1-5), so
// that it passes the checker with full shape inference.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

namespace bnorm::upgrade_detail {

// Adds value_info to `out` (at default opset `opset`) for such outputs:
// their type in `inferred_input` (the model before conversion, shapes
// inferred), else the element type of the node's first input.
void declare_uninferred_types(onnx::ModelProto& out, const onnx::ModelProto& inferred_input, int64_t opset);

}  // namespace bnorm::upgrade_detail
