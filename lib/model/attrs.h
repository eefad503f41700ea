// The one reader of node attributes, for every layer above (eval's ops,
// fold, upgrade's steps, inspect): with a default when absent; a present
// attribute of the wrong type is Error(input) naming it (very old models
// leave `type` unset: the field present decides).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

namespace bnorm {

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, const std::string& name);
// The value of an attribute already found, checked to be of that type.
int64_t attr_int(const onnx::AttributeProto& a);
float attr_float(const onnx::AttributeProto& a);
int64_t attr_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float attr_float(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string attr_string(const onnx::NodeProto& node, const std::string& name, const std::string& fallback);
std::optional<std::vector<int64_t>> attr_ints(const onnx::NodeProto& node, const std::string& name);
std::optional<std::vector<float>> attr_floats(const onnx::NodeProto& node, const std::string& name);
const onnx::GraphProto& attr_graph(const onnx::NodeProto& node, const std::string& name);

}  // namespace bnorm
