// Removing what a transform stopped using.
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

namespace bnorm {

// Names still read anywhere: node inputs and graph outputs, every graph.
std::set<std::string> names_in_use(const onnx::ModelProto& m);
// Names defined anywhere: graph inputs, initializers and node outputs, every graph.
std::set<std::string> names_defined(const onnx::ModelProto& m);

// Of the `released` names, removes those nothing reads any more:
// initializers (with their graph-input entries) and the default-domain
// nodes (without subgraphs) that only made them (a Constant, or a shape
// computation a Reshape no longer reads), whose own inputs are then looked
// at in turn. Names not in `released` are never touched.
void remove_released(onnx::ModelProto& m, std::set<std::string> released);

}  // namespace bnorm
