#include "eval/run/supported.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/run/op.h"
#include "eval/run/preview_ops.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/attr_values.h"
#include "model/op_versions.h"

namespace bnorm::eval {

namespace {

// Why bnorm eval cannot run `n`, or "" when it can.
std::string unsupported_reason(const onnx::NodeProto& n, int64_t opset) {
  if (is_preview_domain(n.domain()) && find_preview_op(n.op_type())) return "";
  if (!is_default_domain(n.domain())) {
    return fmt::format("op '{}.{}' is not supported by bnorm eval (domain '{}')", n.domain(), n.op_type(),
                       n.domain());
  }
  const ResolvedOp r = resolve_op(n.op_type(), opset);
  if (!r.known) return fmt::format("op '{}' is not an ONNX op", n.op_type());
  if (!r.version) return fmt::format("op '{}' does not exist at opset {}: {}", n.op_type(), opset, r.why_not);
  if (find_op(n.op_type(), r.version)) return attr_value_problem(n, r.version);  // never another version's meaning
  if (const char* why = refusal_reason(n.op_type())) {
    return fmt::format("op '{}' is not supported by bnorm eval: {}", n.op_type(), why);
  }
  if (implements_op(n.op_type())) {
    return fmt::format("{}-{} is not implemented by bnorm eval ({})", n.op_type(), r.version,
                       implemented_versions(n.op_type()));
  }
  return fmt::format("op '{}' is not supported by bnorm eval", n.op_type());
}

void collect_unsupported(const onnx::GraphProto& g, int64_t opset, const std::string& path,
                         std::map<std::string, std::vector<const onnx::NodeProto*>>& nodes,
                         std::map<std::string, std::vector<std::string>>& labels) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const std::string problem = unsupported_reason(n, opset);
    if (!problem.empty()) {
      nodes[problem].push_back(&n);
      labels[problem].push_back(node_label(g, i, path));
    }
    for (const auto& a : n.attribute()) {
      const std::string sub = path + node_label(g, i, "") + "/" + a.name() + "/";
      if (a.has_g()) collect_unsupported(a.g(), opset, sub, nodes, labels);
      for (const auto& sg : a.graphs()) collect_unsupported(sg, opset, sub, nodes, labels);
    }
  }
}

}  // namespace

void check_supported(const onnx::GraphProto& g, int64_t opset) {
  std::map<std::string, std::vector<const onnx::NodeProto*>> nodes;  // problem: its nodes
  std::map<std::string, std::vector<std::string>> labels;            // problem: their labels
  collect_unsupported(g, opset, "", nodes, labels);
  if (labels.empty()) return;
  if (labels.size() == 1 && labels.begin()->second.size() == 1) {
    const onnx::NodeProto& n = *nodes.begin()->second.front();
    Error e(ErrorKind::unsupported, labels.begin()->first);
    e.at_node(n.name().empty() ? labels.begin()->second.front() : n.name(), n.op_type(),
              op_version_at(n.op_type(), opset));
    throw e;
  }
  std::vector<std::string> parts;
  for (const auto& [what, ls] : labels) {
    std::vector<std::string> shown(ls.begin(), ls.begin() + std::min<size_t>(ls.size(), 3));
    parts.push_back(fmt::format("{} ({} node{}: {}{})", what, ls.size(), ls.size() == 1 ? "" : "s",
                                fmt::join(shown, ", "), ls.size() > 3 ? ", ..." : ""));
  }
  throw Error(ErrorKind::unsupported,
              fmt::format("{} kinds of node cannot run: {}", parts.size(), fmt::join(parts, "; ")));
}

}  // namespace bnorm::eval
