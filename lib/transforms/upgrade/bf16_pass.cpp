// Finds, going down, the nodes that compute in float between Casts
// (transforms/upgrade/steps/bf16_casts.cpp) and rewrites them at the model's own opset, one
// graph at a time; types come from the model with shapes inferred (ONNX
// 1.12), and from each op's schema (an output of a bfloat16 type
// parameter is bfloat16).
#include "transforms/upgrade/bf16_pass.h"

#include <fmt/format.h>

#include "core/error.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "model/model.h"
#include "model/node_label.h"
#include "model/op_versions.h"
#include "transforms/upgrade/steps/step.h"
#include "transforms/upgrade/steps/walk.h"
#include "transforms/upgrade/types.h"
#include "transforms/upgrade/schema.h"

namespace bnorm::upgrade_detail {

namespace {

// One site as an error names it.
struct Line {
  std::string text;  // "'name' (Op-V): what"
  std::string node, op, what;
  int version = 0;
};

struct Scan {
  std::vector<Bf16Site> sites;
  std::vector<Line> lines;           // one per site
  std::vector<std::string> refused;  // "'name' (Op-V): why", target below 13
};

// Whether a node of `op` can be a site going from `from` to `to`.
bool candidate(const onnx::NodeProto& n, int64_t from, int64_t to, int* vf, int* vt) {
  if (!is_default_domain(n.domain()) || !steps::computes_bf16_in_float(n.op_type())) return false;
  *vf = op_version_at(n.op_type(), from);
  *vt = op_version_at(n.op_type(), to);
  return *vf != *vt && *vf != 0 && *vt != 0 && schema_info(n.op_type(), *vf) && schema_info(n.op_type(), *vt);
}

bool any_candidate(const onnx::ModelProto& m, int64_t from, int64_t to) {
  bool found = false;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    int vf = 0, vt = 0;
    for (const auto& n : g.node()) found = found || candidate(n, from, to, &vf, &vt);
  });
  return found;
}


// Every site of `m`; with `rewrite`, each gets its Casts.
Scan scan(onnx::ModelProto& m, int64_t from, int64_t to, bool rewrite) {
  Scan out;
  if (to >= from || !any_candidate(m, from, to)) return out;
  int vt = 0;
  auto select = [&](const onnx::NodeProto& n, int& vf) { return candidate(n, from, to, &vf, &vt); };
  steps::walk_sites(m, to, select, [&](steps::NormSite& s, const steps::WalkedNode& at) {
    const onnx::NodeProto& n = s.node;
    const int vf = s.version;
    const std::string head = fmt::format("{} ({}-{})", quoted_label(n, at.index, at.path), n.op_type(), vf);
    steps::Bf16Casts c;
    try {
      c = steps::match_bf16_casts(s, *schema_info(n.op_type(), vf), *schema_info(n.op_type(), vt));
    } catch (const Error& e) {
      out.refused.push_back(fmt::format("{}: {}", head, e.bare_message()));
    }
    if (c.empty()) return steps::Visit::keep;
    const std::string what = steps::describe_bf16_casts(s, c, vt);
    out.lines.push_back({fmt::format("{}: {}", head, what), node_label(n), n.op_type(), what, vf});
    Bf16Site site{at.path, node_label(n, at.index, at.path == "main" ? "" : at.path + "/"), n.name(), n.op_type(),
                  what, {}};
    if (rewrite) {
      steps::cast_bf16_through_float(s, c);
      site.added = s.report.added;
    }
    out.sites.push_back(std::move(site));
    return rewrite ? steps::Visit::splice : steps::Visit::keep;
  });
  return out;
}

}  // namespace

void cast_bf16_sites(onnx::ModelProto& m, int64_t from, int64_t to, bool allowed, UpgradeReport& r) {
  onnx::ModelProto work = m;
  Scan found = scan(work, from, to, allowed);
  if (!found.refused.empty()) {
    throw Error(ErrorKind::unsupported,
                fmt::format("{} node{} cannot be converted to opset {}:\n  {}", found.refused.size(),
                            found.refused.size() == 1 ? "" : "s", to, fmt::join(found.refused, "\n  ")))
        .with_hint("bfloat16 exists from opset 13 on: convert to opset 13 or later, or cast the model's bfloat16 "
                   "tensors to float first");
  }
  if (found.sites.empty()) return;
  if (!allowed) {
    const char* hint = "without --no-casts each computes in float between Casts (bfloat16 -> float is exact; the result "
                       "is rounded once to bfloat16)";
    if (found.lines.size() == 1) {
      const Line& l = found.lines.front();
      throw Error(ErrorKind::unsupported, fmt::format("would need casts to go to opset {} ({}), and --no-casts forbids "
                                                      "computing in float between Casts", to, l.what))
          .at_node(l.node, l.op, l.version)
          .with_hint(hint);
    }
    std::vector<std::string> lines;
    for (const auto& l : found.lines) lines.push_back(l.text);
    throw Error(ErrorKind::unsupported,
                fmt::format("{} nodes would need casts to go to opset {}: their ops have no bfloat16 there, and "
                            "--no-casts forbids computing in float between Casts:\n  {}",
                            lines.size(), to, fmt::join(lines, "\n  ")))
        .with_hint(hint);
  }
  for (auto& site : found.sites) {
    r.rewrites.push_back({site.graph, site.name, site.op, "casts bfloat16 <-> float (" + site.what + ")", site.added,
                          site.label});
  }
  m = std::move(work);
}

std::vector<Bf16Site> bf16_sites(const onnx::ModelProto& m, int64_t from, int64_t to) {
  onnx::ModelProto work = m;
  return scan(work, from, to, false).sites;
}

}  // namespace bnorm::upgrade_detail
