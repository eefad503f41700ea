// The pre-flight plan: opsets above 17 are planned node by node by the
// same code that converts (upgrade_high.cpp, on a copy); up to 17 the
// plan runs the whole conversion on a copy and reports what it refuses,
// then lists each node whose schema version changes with who converts it.
#include "transforms/upgrade_preflight.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/error.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "transforms/upgrade.h"
#include "transforms/upgrade_bf16.h"
#include "transforms/upgrade_high.h"
#include "transforms/upgrade_lower.h"
#include "transforms/upgrade_onnx.h"
#include "transforms/upgrade_versions.h"

namespace bnorm {

std::string quoted_label(const onnx::NodeProto& n, int index, const std::string& graph_path) {
  const std::string prefix = graph_path == "main" || graph_path.empty() ? "" : graph_path + "/";
  if (!n.name().empty()) return fmt::format("'{}{}'", prefix, n.name());
  return node_label(n, index, prefix);
}

namespace {

using namespace upgrade_detail;

// Who converts a node across the versions it crosses at opsets <= 17.
std::string low_converter(const onnx::NodeProto& n, int64_t from, int64_t to, std::vector<std::string>& changes) {
  const bool up = to > from;
  std::vector<int> crossed = up ? versions_between(n.op_type(), from, to) : versions_between(n.op_type(), to, from);
  bool all_types = true, own = is_norm_node(n) || converted_by_own_step(n, from, to);
  for (int v : crossed) {
    const VersionChange* c = version_change(n.op_type(), v);
    const VersionKind k = c ? c->kind : VersionKind::onnx;
    all_types = all_types && k == VersionKind::types;
    own = own || k == VersionKind::step;
    changes.push_back(fmt::format("{} {}: {}{}", up ? "->" : "<-", v, version_kind_name(k),
                                  c && *c->detail ? fmt::format(" ({})", c->detail) : ""));
  }
  if (own) return "bnorm";
  return all_types && !up ? "type-only" : "onnx";
}

void plan_low(const Model& model, int64_t from, int64_t to, UpgradePlan& plan) {
  for_each_graph(model.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (!is_default_domain(n.domain()) || is_lowered(n, plan.from_opset, plan.to_opset)) continue;
      const int vf = op_version_at(n.op_type(), from), vt = op_version_at(n.op_type(), to);
      if (vf == vt) continue;
      NodePlan p{path, node_label(n, i, path == "main" ? "" : path + "/"), quoted_label(n, i, path), n.op_type(), vf,
                 vt, "", {}, ""};
      if (vt == 0 && n.op_type() == "Resize") {
        p.changes.push_back(fmt::format("becomes Upsample-{} where the numbers stay the same (steps/resize_10.cpp)",
                                        op_version_at("Upsample", to)));
      } else if (vt == 0 && !is_norm_node(n)) {
        const ResolvedOp r = resolve_op(n.op_type(), to);
        p.blocker = fmt::format("op '{}' does not exist at opset {}: {}", n.op_type(), to, r.why_not);
        plan.blockers.push_back(fmt::format("{} ({}-{}): {}", quoted_label(n, i, path), n.op_type(), vf, p.blocker));
      }
      p.by = low_converter(n, from, to, p.changes);
      plan.nodes.push_back(std::move(p));
    }
  });
}

// Nodes that compute in float between Casts (upgrade_bf16.h): the plan
// says so, and their bfloat16 is no blocker.
void note_bf16_casts(const std::vector<Bf16Site>& sites, UpgradePlan& plan) {
  for (const auto& site : sites) {
    for (auto& p : plan.nodes) {
      if (p.graph != site.graph || p.label != site.label) continue;
      const std::string line = "casts bfloat16 <-> float (" + site.what + ")";
      if (std::find(p.changes.begin(), p.changes.end(), line) != p.changes.end()) continue;
      p.changes.push_back(line);
      p.by = "bnorm";
      if (p.blocker.find("bfloat16") != std::string::npos) p.blocker.clear();
    }
  }
}

}  // namespace

UpgradePlan plan_upgrade_model(const Model& model, int64_t target) {
  UpgradePlan plan;
  plan.from_opset = default_opset(model.proto);
  plan.to_opset = target;
  plan.from_ir = model.proto.ir_version();
  if (target < kUpgradeMinOpset || target > kUpgradeMaxOpset) {
    throw Error(ErrorKind::usage, fmt::format("--to {}: the target opset must be {} to {}", target, kUpgradeMinOpset,
                                              kUpgradeMaxOpset));
  }
  const int64_t from = plan.from_opset, mid = kOnnxConverterMaxOpset;
  plan.blockers = type_blockers(model.proto, target);
  // Nodes lowered first (upgrade_lower.h); the other parts skip them.
  std::set<std::pair<std::string, std::string>> lowered;
  for (auto& p : plan_lowering(model.proto, from, target)) {
    lowered.emplace(p.graph, p.label);
    plan.nodes.push_back(std::move(p));
  }
  if (from > mid || target > mid) {
    // The part above 17, node by node; the part below (if any) as a whole below.
    const int64_t hi_from = std::max(from, mid), hi_to = std::max(target, mid);
    for (auto& p : plan_high(model.proto, hi_from, hi_to)) {
      if (!lowered.count({p.graph, p.label})) plan.nodes.push_back(std::move(p));
    }
  }
  const std::vector<Bf16Site> casts = bf16_sites(model.proto, from, target);
  note_bf16_casts(casts, plan);
  for (const auto& p : plan.nodes) {
    if (!p.blocker.empty()) plan.blockers.push_back(fmt::format("{} ({}-{}): {}", p.quoted, p.op, p.from, p.blocker));
  }
  if (std::min(from, mid) != std::min(target, mid) || (from <= mid && target <= mid)) {
    const int64_t lo_from = std::min(from, mid), lo_to = std::min(target, mid);
    plan_low(model, lo_from, lo_to, plan);
  }
  note_bf16_casts(casts, plan);
  if (plan.blockers.empty()) {
    Model copy = model;
    UpgradeOptions o;
    o.target = target;
    try {
      const UpgradeReport r = upgrade_model(copy, o);
      plan.to_ir = r.to_ir;
    } catch (const Error& e) {
      plan.blockers.push_back(e.message());
    }
  }
  return plan;
}

}  // namespace bnorm
