#include "transforms/upgrade/types.h"

#include <fmt/format.h>

#include "model/node_label.h"

namespace bnorm {

std::string quoted_label(const onnx::NodeProto& n, int index, const std::string& graph_path) {
  const std::string prefix = graph_path == "main" || graph_path.empty() ? "" : graph_path + "/";
  if (!n.name().empty()) return fmt::format("'{}{}'", prefix, n.name());
  return node_label(n, index, prefix);
}

}  // namespace bnorm
