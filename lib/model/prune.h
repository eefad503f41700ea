// Removing what a transform stopped using.
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

namespace bnorm {

// Names still read anywhere: node inputs and graph outputs, every graph.
std::set<std::string> names_in_use(const onnx::ModelProto& m);

// Of the `released` names, removes those nothing reads any more:
// initializers (with their graph-input entries) and the nodes that only
// made constants (Constant, Identity, ConstantOfShape), whose own inputs
// are then looked at in turn. Names not in `released` are never touched.
void remove_released(onnx::ModelProto& m, std::set<std::string> released);

}  // namespace bnorm
