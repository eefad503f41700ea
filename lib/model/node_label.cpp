#include "model/node_label.h"

#include <fmt/format.h>

namespace bnorm {

std::string node_label(const onnx::NodeProto& n, int index, const std::string& graph_path) {
  if (!n.name().empty()) return graph_path + n.name();
  std::string first;
  for (const auto& o : n.output()) {
    if (!o.empty()) {
      first = o;
      break;
    }
  }
  const std::string op = n.op_type().empty() ? std::string("node") : n.op_type();
  if (first.empty()) return fmt::format("{}{} #{}", graph_path, op, index);
  return fmt::format("{}{} #{} -> '{}'", graph_path, op, index, first);
}

std::string node_label(const onnx::NodeProto& n) {
  if (!n.name().empty()) return n.name();
  for (const auto& o : n.output()) {
    if (!o.empty()) return fmt::format("{} -> '{}'", n.op_type(), o);
  }
  return n.op_type();
}

}  // namespace bnorm
