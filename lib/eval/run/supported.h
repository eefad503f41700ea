// Whether the evaluator can run every node of a graph, before it runs any
// (evaluator.cpp): each default-domain node's schema version at the opset
// must be one an op family implements (op_table.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

namespace bnorm::eval {

// Error(unsupported) listing every node of `g` (subgraphs included) that
// cannot run, per reason, with how many and the first few labels; a single
// such node is named as the Error's node.
void check_supported(const onnx::GraphProto& g, int64_t opset);

}  // namespace bnorm::eval
