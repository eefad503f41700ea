// The nodes of a model whose string attributes hold a value their own
// schema version does not define (model/attr_values.h): e.g. a Resize-13
// with coordinate_transformation_mode tf_half_pixel_for_nn, a mode of
// Resize-11 only. Such a node has no meaning to carry to another opset:
// upgrade lists them as blockers before converting anything, as eval
// refuses to run them (docs/semantics.md).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace bnorm {

// One line per such node, in every graph: "node 'r' (Resize-13): 'x' is not a ...".
std::vector<std::string> attr_value_blockers(const onnx::ModelProto& m);

}  // namespace bnorm
