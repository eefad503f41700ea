#include "transforms/upgrade/attr_blockers.h"

#include <fmt/format.h>

#include "model/attr_values.h"
#include "model/model.h"
#include "model/model_walk.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "transforms/upgrade/types.h"

namespace bnorm {

std::vector<std::string> attr_value_blockers(const onnx::ModelProto& m) {
  const int64_t opset = default_opset(m);
  std::vector<std::string> out;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (!is_default_domain(n.domain())) continue;
      const int version = resolve_op(n.op_type(), opset).version;
      if (version == 0) continue;
      const std::string p = attr_value_problem(n, version);
      if (p.empty()) continue;
      out.push_back(fmt::format("{} ({}-{}): {}", quoted_label(n, i, path), n.op_type(), version, p));
    }
  });
  return out;
}

}  // namespace bnorm
