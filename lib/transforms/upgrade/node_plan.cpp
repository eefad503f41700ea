// The plan of every node's conversion: opsets above 17 node by node by the
// same code that converts (high.cpp, on a copy), lowering and bfloat16
// casts by their passes' planners, up to 17 from the table of schema
// changes, each node whose schema version changes with who converts it.
#include "transforms/upgrade/node_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/error.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "transforms/upgrade/bf16_pass.h"
#include "transforms/upgrade/attr_blockers.h"
#include "transforms/upgrade/ir_types.h"
#include "transforms/upgrade/high.h"
#include "transforms/upgrade/lower_pass.h"
#include "transforms/upgrade/onnx_converter.h"
#include "transforms/upgrade/versions.h"

namespace bnorm {

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
    std::string what = c && *c->detail ? c->detail : "";
    if (c && c->step) what = what.empty() ? c->step->name : what + "; step " + c->step->name;
    changes.push_back(fmt::format("{} {}: {}{}", up ? "->" : "<-", v, version_kind_name(k),
                                  what.empty() ? "" : fmt::format(" ({})", what)));
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
        p.changes.push_back(fmt::format("becomes Upsample-{} where the numbers stay the same (transforms/upgrade/steps/resize_10.cpp)",
                                        op_version_at("Upsample", to)));
      } else if (vt == 0 && n.op_type() == "ScatterElements" && to >= 9) {
        p.changes.push_back("becomes Scatter-9, its earlier name (transforms/upgrade/steps/axis_11.cpp)");
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

// Nodes that compute in float between Casts (bf16_pass.h): the plan
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

UpgradePlan plan_nodes(const Model& model, int64_t target) {
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
  for (auto& b : attr_value_blockers(model.proto)) plan.blockers.push_back(std::move(b));
  // Nodes lowered first (lower_pass.h); the other parts skip them.
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
  return plan;
}

}  // namespace bnorm
