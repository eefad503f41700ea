// bnorm upgrade's work and its document (bnorm.upgrade/1).
#include <algorithm>

#include "api/outcomes.h"
#include "core/log.h"
#include "model/model.h"
#include "transforms/upgrade/upgrade.h"

namespace bnorm::api {

namespace {

nlohmann::json optional_text(const std::optional<std::string>& s) { return s ? nlohmann::json(*s) : nlohmann::json(); }

nlohmann::json checks_json(const std::vector<UpgradeCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : checks) {
    out.push_back({{"output", c.output}, {"type", c.type}, {"shape", c.shape}, {"max_abs", c.max_abs},
                   {"max_rel", c.max_rel}, {"pass", c.pass}, {"problem", c.problem}});
  }
  return out;
}

}  // namespace

bool UpgradeOutcome::passed() const { return verification.pass(); }

UpgradeOutcome convert_model(Model& model, const UpgradeRequest& request) {
  UpgradeOutcome o;
  UpgradeOptions options;
  options.target = request.to;
  options.inference = request.inference;
  options.casts = request.casts;
  options.fuse_norms = request.fuse_norms;
  o.fuse_norms = request.fuse_norms;
  o.report = upgrade_model(model, options);
  for (const auto& w : o.report.warnings) log().warn("{}", w);
  return o;
}

void check_and_verify(UpgradeOutcome& o, const Model* before, const Model& model, const UpgradeRequest& request) {
  Stopwatch took;
  if (request.check) {
    check_model_full(model.proto, model.dir());
    o.checked = true;
    log().debug("checked the result ({:.1f} ms)", took.ms());
  }
  if (before) {
    took = Stopwatch();
    VerifyInputs in;
    in.seed = request.seed;
    in.dims = request.dims;
    in.ranges = request.ranges;
    in.given = request.inputs;
    in.sets = request.input_sets;
    o.verification = verify_upgrade(*before, model, in);
    o.verified = true;
    log().debug("verified {} values ({:.1f} ms)", o.verification.compared.values.size(), took.ms());
  }
}

nlohmann::json upgrade_document(const UpgradeOutcome& o, const UpgradeRequest& request, bool written) {
  const UpgradeReport& r = o.report;
  nlohmann::json nodes = nlohmann::json::array(), rewrites = nlohmann::json::array();
  for (const auto& n : r.nodes) {
    nodes.push_back({{"graph", n.graph}, {"name", n.name}, {"label", n.label}, {"op", n.op}, {"from", n.from},
                     {"to", n.to}, {"steps", n.steps}, {"dropped", n.dropped}, {"set", n.set}, {"added", n.added},
                     {"warnings", n.warnings}, {"made_inference", n.made_inference}});
  }
  for (const auto& w : r.rewrites) {
    rewrites.push_back({{"graph", w.graph}, {"name", w.name}, {"label", w.label}, {"op", w.op}, {"what", w.what},
                        {"added", w.added}});
  }
  nlohmann::json out{{"input", optional_text(request.input)}, {"output", optional_text(request.output)},
                     {"from_opset", r.from_opset}, {"to_opset", r.to_opset}, {"from_ir", r.from_ir},
                     {"to_ir", r.to_ir}, {"checked", request.check}, {"norm_nodes", nodes},
                     {"rewrites", rewrites}, {"made_inference", r.made_inference}, {"removed", r.removed},
                     {"warnings", r.warnings}};
  if (o.fuse_norms) {
    nlohmann::json missed = nlohmann::json::array();
    for (const auto& m : r.not_fused) missed.push_back({{"graph", m.graph}, {"label", m.label}, {"op", m.op}, {"why", m.why}});
    out["not_fused"] = missed;
  }
  if (request.verify) {
    out["verify"] = checks_json(o.verification.outputs);
    out["verify_model"] = judged_values_json(o.verification.compared);
  }
  out["written"] = written;
  out["exit_code"] = o.passed() ? 0 : 1;
  return with_schema(std::move(out), "bnorm.upgrade/1");
}

Report upgrade(Model& model, const UpgradeRequest& request) {
  std::optional<Model> before;
  if (request.verify) before = model;
  UpgradeOutcome o = convert_model(model, request);
  check_and_verify(o, before ? &*before : nullptr, model, request);
  return Report{upgrade_document(o, request, false), o.passed() ? 0 : 1};
}

}  // namespace bnorm::api
