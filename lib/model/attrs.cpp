#include "model/attrs.h"

#include "core/error.h"

namespace bnorm {

namespace {

const onnx::AttributeProto* typed(const onnx::NodeProto& node, const std::string& name,
                                  onnx::AttributeProto::AttributeType type, bool has_value, const char* what) {
  const onnx::AttributeProto* a = find_attr(node, name);
  if (!a) return nullptr;
  // Very old models leave `type` unset (UNDEFINED); the field present decides.
  if (a->type() != type && !(a->type() == onnx::AttributeProto::UNDEFINED && has_value)) {
    fail(ErrorKind::input, "attribute '{}' must be {}", name, what);
  }
  return a;
}

}  // namespace

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t attr_int(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::INT && !(a.type() == onnx::AttributeProto::UNDEFINED && a.has_i())) {
    fail(ErrorKind::input, "attribute '{}' must be an int", a.name());
  }
  return a.i();
}

float attr_float(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::FLOAT && !(a.type() == onnx::AttributeProto::UNDEFINED && a.has_f())) {
    fail(ErrorKind::input, "attribute '{}' must be a float", a.name());
  }
  return a.f();
}

int64_t attr_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* a = find_attr(node, name);
  if (!a) return fallback;
  return typed(node, name, onnx::AttributeProto::INT, a->has_i(), "an int")->i();
}

float attr_float(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const auto* a = find_attr(node, name);
  if (!a) return fallback;
  return typed(node, name, onnx::AttributeProto::FLOAT, a->has_f(), "a float")->f();
}

std::string attr_string(const onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
  const auto* a = find_attr(node, name);
  if (!a) return fallback;
  return typed(node, name, onnx::AttributeProto::STRING, a->has_s(), "a string")->s();
}

std::optional<std::vector<int64_t>> attr_ints(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  typed(node, name, onnx::AttributeProto::INTS, true, "a list of ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<float>> attr_floats(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  typed(node, name, onnx::AttributeProto::FLOATS, true, "a list of floats");
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

const onnx::GraphProto& attr_graph(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = typed(node, name, onnx::AttributeProto::GRAPH, true, "a graph");
  if (!a || !a->has_g()) fail(ErrorKind::input, "attribute '{}' (a graph) is missing", name);
  return a->g();
}

}  // namespace bnorm
