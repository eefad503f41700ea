// bnorm inspect's work and its document (bnorm.inspect/1).
#include "api/outcomes.h"
#include "eval/run/random_inputs.h"
#include "model/model.h"
#include "transforms/upgrade/preflight.h"

namespace bnorm::api {

namespace {

nlohmann::json plan_json(const UpgradePlan& p) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : p.nodes) {
    nodes.push_back({{"graph", n.graph}, {"label", n.label}, {"op", n.op}, {"from", n.from}, {"to", n.to},
                     {"by", n.by}, {"changes", n.changes}, {"blocker", n.blocker}});
  }
  return {{"from_opset", p.from_opset}, {"to_opset", p.to_opset}, {"from_ir", p.from_ir}, {"to_ir", p.to_ir},
          {"blockers", p.blockers}, {"nodes", nodes}};
}

nlohmann::json risks_json(const std::vector<Fp16Risk>& risks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : risks) {
    out.push_back({{"graph", r.graph}, {"node", r.node}, {"index", r.node_index}, {"op", r.op}, {"check", r.check},
                   {"input", r.input}, {"what", r.what}, {"advice", r.advice}});
  }
  return out;
}

nlohmann::json shapes_json(const std::vector<ValueShape>& shapes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : shapes) {
    nlohmann::json dims = nullptr;
    if (v.dims) {
      dims = nlohmann::json::array();
      for (const auto& d : *v.dims) {
        if (d == "?") dims.push_back(nullptr);
        else if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos) dims.push_back(std::stoll(d));
        else dims.push_back(d);
      }
    }
    out.push_back({{"graph", v.graph}, {"name", v.name}, {"type", v.type}, {"shape", dims}});
  }
  return out;
}

}  // namespace

InspectOutcome inspect_model(const Model& model, const InspectRequest& request) {
  const bool measuring = request.seed || !request.inputs.empty() || !request.dims.empty();
  if (measuring && !request.fp16) throw Error(ErrorKind::usage, "--input, --random and --dim go with --fp16");
  InspectOutcome o;
  o.report = ::bnorm::inspect(model);  // the transforms layer's, not this namespace's
  if (request.file) o.report.file = *request.file;
  if (request.fp16) {
    o.measured = measuring;
    if (measuring) {
      const auto inputs = complete_inputs(model, request.inputs, request.seed, request.dims, request.ranges);
      o.risks = fp16_risks(model, &inputs);
    } else {
      o.risks = fp16_risks(model);
    }
  }
  if (request.to) o.plan = plan_upgrade_model(model, *request.to);
  if (request.shapes) o.shapes = value_shapes(model);
  return o;
}

nlohmann::json inspect_document(const InspectOutcome& o, const InspectRequest& request) {
  nlohmann::json j = to_json(o.report);
  if (!request.file) j["file"] = nullptr;
  if (o.plan) j["upgrade_plan"] = plan_json(*o.plan);
  if (o.risks) j["fp16_risks"] = risks_json(*o.risks);
  if (o.shapes) j["value_shapes"] = shapes_json(*o.shapes);
  return with_schema(std::move(j), "bnorm.inspect/1");
}

Report inspect(const Model& model, const InspectRequest& request) {
  return Report{inspect_document(inspect_model(model, request), request), 0};
}

}  // namespace bnorm::api
