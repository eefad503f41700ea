// Converts nodes across the schema changes of opsets 17..23 by the table
// of schema changes (versions.h), one node at a time; see
// high.h. Each node is a steps::NormSite (the same site the
// normalization steps use: constants and types come from the model with
// shapes inferred by ONNX 1.12, which reads ops it knows at their newest
// version <= 17 and leaves the values of ops it does not know untyped).
#include "transforms/upgrade/high.h"

#include <fmt/format.h>

#include <unordered_set>

#include "core/error.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "model/node_label.h"
#include "model/op_versions.h"
#include "transforms/upgrade/steps/step.h"
#include "transforms/upgrade/steps/walk.h"
#include "transforms/upgrade/schema.h"
#include "transforms/upgrade/versions.h"

namespace bnorm::upgrade_detail {

namespace {

using steps::NormSite;
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t k = s.find(sep, start);
    out.push_back(s.substr(start, k == std::string::npos ? std::string::npos : k - start));
    if (k == std::string::npos) break;
    start = k + 1;
  }
  return out;
}

std::string attr_text(const onnx::AttributeProto& a) {
  if (a.type() == onnx::AttributeProto::INT) return std::to_string(a.i());
  if (a.type() == onnx::AttributeProto::STRING) return a.s();
  if (a.type() == onnx::AttributeProto::FLOAT) return fmt::format("{}", a.f());
  if (a.type() == onnx::AttributeProto::INTS) return fmt::format("[{}]", fmt::join(a.ints(), ", "));
  return "(set)";
}

// Going down across attributes added with defaults ("name=default,...").
void drop_defaulted(NormSite& s, const char* detail) {
  for (const auto& item : split(detail, ',')) {
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq), def = item.substr(eq + 1);
    const auto* a = find_attr(s.node, name);
    if (!a) continue;
    bool at_default = def == "*";
    if (def == "1s") at_default = std::all_of(a->ints().begin(), a->ints().end(), [](int64_t v) { return v == 1; });
    else if (!def.empty() && def != "*") at_default = attr_text(*a) == def;
    if (!at_default) {
      const std::string only = def.empty() ? "absent" : def == "1s" ? "all ones" : def;
      steps::refuse(s, fmt::format("attribute {} = {} has no equivalent below version {}: only its default ({}) has",
                                   name, attr_text(*a), s.version, only));
    }
    steps::remove_attr(s.node, name);
    s.report.dropped.push_back(fmt::format("{} (at its default)", name));
  }
}

// Going down across an attribute value added ("attr=v1|v2").
void refuse_new_values(const NormSite& s, const char* detail) {
  const std::string d = detail;
  const size_t eq = d.find('=');
  const std::string name = d.substr(0, eq);
  const auto* a = find_attr(s.node, name);
  if (!a) return;
  for (const auto& v : split(d.substr(eq + 1), '|')) {
    if (attr_text(*a) == v) {
      steps::refuse(s, fmt::format("{} = '{}' was added at version {}; no earlier version has it", name, v, s.version));
    }
  }
}

std::string describe(const VersionChange& c, bool up) {
  switch (c.kind) {
    case VersionKind::types: return "type-only";
    case VersionKind::attrs: return up ? "attributes added (defaults)" : fmt::format("drop {} at default", c.detail);
    case VersionKind::value: return up ? "attribute value added" : fmt::format("refuse {}", c.detail);
    case VersionKind::step: return fmt::format("step {}", c.step->name);
    default: return version_kind_name(c.kind);
  }
}

// One schema change crossed by the site, up or down.
void cross(NormSite& s, const VersionChange& c, bool up) {
  switch (c.kind) {
    case VersionKind::types: return;
    case VersionKind::attrs:
      if (!up) drop_defaulted(s, c.detail);
      return;
    case VersionKind::value:
      if (!up) refuse_new_values(s, c.detail);
      return;
    case VersionKind::step: return (up ? c.step->up : c.step->down)(s);
    case VersionKind::refused: steps::refuse(s, c.detail);
    case VersionKind::onnx: steps::refuse(s, "only ONNX 1.12's converter handles this change, below opset 17");
  }
}

std::string known_type(const NormSite& s, const std::string& value) {
  if (auto it = s.new_types.find(value); it != s.new_types.end()) return tensor_type_name(static_cast<int32_t>(it->second));
  const onnx::TypeProto* t = s.env->index->declared_type(*s.scope, value);
  return t ? type_text(*t) : "";
}

// Moves the site's node from opset `from` to `to`, crossing each schema change.
// Returns whether every change crossed was type-only.
bool convert_site(NormSite& s, int64_t from, int64_t to, std::vector<std::string>& changes) {
  const std::string op = s.node.op_type();
  const ResolvedOp at_to = resolve_op(op, to);
  if (at_to.version == 0) {
    steps::refuse(s, fmt::format("op '{}' does not exist at opset {}: {}", op, to, at_to.why_not));
  }
  const bool up = to > from;
  std::vector<int> crossed = up ? versions_between(op, from, to) : versions_between(op, to, from);
  if (!up) std::reverse(crossed.begin(), crossed.end());
  const OpHistory* h = op_history(op);
  bool only_types = true;
  for (int v : crossed) {
    const VersionChange* c = version_change(op, v);
    if (!c) steps::refuse(s, fmt::format("bnorm has no row for {}-{} in its table of schema changes", op, v));
    if (up) s.version = v;
    only_types = only_types && c->kind == VersionKind::types;
    cross(s, *c, up);
    changes.push_back(fmt::format("{} {}: {}", up ? "->" : "<-", v, describe(*c, up)));
    if (!up) {
      int below = 0;
      for (int w : h->versions)
        if (w < v) below = w;
      s.version = below;
    }
  }
  s.version = at_to.version;
  if (const OpSchemaInfo* schema = schema_info(op, at_to.version)) {
    const std::string p = type_problem(s.node, *schema, [&](const std::string& v) { return known_type(s, v); });
    if (!p.empty()) steps::refuse(s, p);
  }
  return only_types;
}



// Converts (or plans, on a copy) every node; `plans` gets one entry per node whose version changes.
void run(onnx::ModelProto& m, int64_t from, int64_t to, std::vector<NodePlan>& plans, UpgradeReport* r) {
  auto select = [&](const onnx::NodeProto& n, int& version) {
    version = op_version_at(n.op_type(), from);
    const int vt = op_version_at(n.op_type(), to);
    return is_default_domain(n.domain()) && !(version == vt && version != 0);
  };
  steps::walk_sites(m, to, select, [&](NormSite& s, const steps::WalkedNode& at) {
    const onnx::NodeProto& n = s.node;
    const int vf = s.version, vt = op_version_at(n.op_type(), to);
    NodePlan plan{at.path, node_label(n, at.index, at.path == "main" ? "" : at.path + "/"),
                  quoted_label(n, at.index, at.path), n.op_type(), vf, vt, "bnorm", {}, ""};
    const std::string name = n.name(), op = n.op_type();
    bool only_types = false;
    try {
      only_types = convert_site(s, from, to, plan.changes);
    } catch (const Error& e) {
      plan.blocker = e.bare_message();
    }
    if (only_types) plan.by = "type-only";
    const bool ok = plan.blocker.empty();
    if (ok && r && !only_types) {
      std::vector<std::string> what{fmt::format("{}->{}", vf, vt)};
      for (const auto& d : s.report.dropped) what.push_back("dropped " + d);
      for (const auto& x : s.report.set) what.push_back("set " + x);
      r->rewrites.push_back({at.path, name, op, fmt::format("{}", fmt::join(what, "; ")), s.report.added, plan.label});
    }
    plans.push_back(std::move(plan));
    return ok ? steps::Visit::splice : steps::Visit::keep;
  });
  set_default_opset(m, to);
}

std::string blockers_message(const std::vector<NodePlan>& plans, int64_t to, std::vector<std::string>* list) {
  std::string msg;
  int count = 0;
  for (const auto& p : plans) {
    if (p.blocker.empty()) continue;
    ++count;
    const std::string line = fmt::format("{} ({}-{}): {}", p.quoted, p.op, p.from, p.blocker);
    if (list) list->push_back(line);
    msg += "\n  " + line;
  }
  if (count == 0) return "";
  return fmt::format("{} node{} cannot be converted to opset {}:{}", count, count == 1 ? "" : "s", to, msg);
}

}  // namespace

void convert_high(onnx::ModelProto& m, int64_t from, int64_t to, UpgradeReport& r) {
  std::vector<NodePlan> plans;
  onnx::ModelProto work = m;
  run(work, from, to, plans, &r);
  const std::string msg = blockers_message(plans, to, nullptr);
  if (!msg.empty()) throw Error(ErrorKind::unsupported, msg);
  m = std::move(work);
}

std::vector<NodePlan> plan_high(const onnx::ModelProto& m, int64_t from, int64_t to) {
  std::vector<NodePlan> plans;
  onnx::ModelProto work = m;
  run(work, from, to, plans, nullptr);
  return plans;
}

}  // namespace bnorm::upgrade_detail
