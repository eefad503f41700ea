// Reading node attributes with defaults, for the ops. A present attribute of
// the wrong type is Error(input) naming it.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

namespace bnorm::eval {

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, const std::string& name);
int64_t attr_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float attr_float(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string attr_string(const onnx::NodeProto& node, const std::string& name, const std::string& fallback);
std::optional<std::vector<int64_t>> attr_ints(const onnx::NodeProto& node, const std::string& name);
std::optional<std::vector<float>> attr_floats(const onnx::NodeProto& node, const std::string& name);
const onnx::GraphProto& attr_graph(const onnx::NodeProto& node, const std::string& name);

}  // namespace bnorm::eval
