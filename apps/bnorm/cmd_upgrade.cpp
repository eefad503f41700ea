// bnorm upgrade IN.onnx -o OUT.onnx | IN.onnx... --output-dir DIR  [--to N] [--inference] [--no-check] [--json] [--external-data NAME]
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "batch.h"
#include "commands.h"
#include "core/error.h"
#include "core/log.h"
#include "model/model.h"
#include "transforms/upgrade.h"

namespace bnorm::cli {

namespace {

struct UpgradeCliOptions {
  OutputOptions files;
  int64_t to = kUpgradeDefaultOpset;
  bool inference = false, no_check = false, json = false;
};

nlohmann::json to_json(const UpgradeReport& r, const UpgradeCliOptions& o, const ModelJob& job) {
  nlohmann::json nodes = nlohmann::json::array(), rewrites = nlohmann::json::array();
  for (const auto& n : r.nodes) {
    nodes.push_back({{"graph", n.graph}, {"name", n.name}, {"label", n.label}, {"op", n.op}, {"from", n.from}, {"to", n.to},
                     {"steps", n.steps}, {"dropped", n.dropped}, {"set", n.set}, {"added", n.added},
                     {"warnings", n.warnings}, {"made_inference", n.made_inference}});
  }
  for (const auto& w : r.rewrites) {
    rewrites.push_back({{"graph", w.graph}, {"name", w.name}, {"label", w.label}, {"op", w.op}, {"what", w.what},
                        {"added", w.added}});
  }
  return {{"input", job.input}, {"output", job.output}, {"from_opset", r.from_opset}, {"to_opset", r.to_opset},
          {"from_ir", r.from_ir}, {"to_ir", r.to_ir}, {"checked", !o.no_check}, {"norm_nodes", nodes},
          {"rewrites", rewrites}, {"made_inference", r.made_inference}, {"removed", r.removed}, {"warnings", r.warnings}};
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void print_text(const UpgradeReport& r, const UpgradeCliOptions& o, const ModelJob& job) {
  if (r.from_opset == r.to_opset) {
    std::cout << fmt::format("{} is already at opset {} (IR {}): nothing to convert{}\n", job.input, r.to_opset,
                             r.to_ir, r.from_ir == r.to_ir ? "" : fmt::format(" (IR {} -> {})", r.from_ir, r.to_ir));
  } else {
    std::cout << fmt::format("{} {} from opset {} (IR {}) to opset {} (IR {})\n",
                             r.to_opset > r.from_opset ? "upgraded" : "downgraded", job.input, r.from_opset, r.from_ir,
                             r.to_opset, r.to_ir);
  }
  for (const auto& n : r.nodes) {
    std::cout << fmt::format("  {} ({}) {} -> {}{}{}\n", n.label, n.op, n.from, n.to,
                             n.steps.empty() ? "" : ": steps " + join(n.steps),
                             n.graph == "main" ? "" : " (" + n.graph + ")");
    if (!n.dropped.empty()) std::cout << fmt::format("      dropped  {}\n", join(n.dropped));
    if (!n.set.empty()) std::cout << fmt::format("      set      {}\n", join(n.set));
    if (!n.added.empty()) std::cout << fmt::format("      added    {}\n", join(n.added));
    for (const auto& w : n.warnings) std::cout << fmt::format("      warning  {}\n", w);
  }
  for (const auto& w : r.rewrites) {
    std::cout << fmt::format("  {} ({}) {}{}\n", w.label, w.op, w.what, w.added.empty() ? "" : "; added " + join(w.added));
  }
  if (!r.made_inference.empty()) std::cout << fmt::format("made inference (--inference): {}\n", join(r.made_inference));
  if (!r.removed.empty()) std::cout << fmt::format("removed, no longer read: {}\n", join(r.removed));
  std::cout << fmt::format("wrote {}{}\n", job.output, o.no_check ? " (not checked: --no-check)" : r.to_opset > kOnnxConverterMaxOpset ? " (passes bnorm's schema check)" : " (passes ONNX's checker)");
}

int upgrade_one(const UpgradeCliOptions& opt, const ModelJob& job, nlohmann::json* json) {
  Model model = load_model(job.input);
  SaveOptions save;
  save.external_data_name = opt.files.external_data;
  check_output_path(model, job.output, save);
  UpgradeOptions options;
  options.target = opt.to;
  options.inference = opt.inference;
  const UpgradeReport r = upgrade_model(model, options);
  for (const auto& w : r.warnings) log().warn("{}", w);
  if (!opt.no_check) check_model_full(model.proto, model.dir());
  save_model(model, job.output, save);
  if (json) *json = to_json(r, opt, job);
  else print_text(r, opt, job);
  return kExitOk;
}

}  // namespace

Runner add_upgrade(CLI::App& app) {
  auto opt = std::make_shared<UpgradeCliOptions>();
  CLI::App* sub = app.add_subcommand("upgrade", "Convert a whole model to another opset (1 to 23), BatchNormalization "
                                                "and InstanceNormalization exactly");
  add_output_options(sub, opt->files);
  sub->add_option("--to", opt->to, "Target opset, 1 to 23 (default 15), lower or higher than the model's");
  sub->add_flag("--inference", opt->inference,
                "The model is an inference model: training BatchNormalization nodes become inference nodes");
  sub->add_flag("--no-check", opt->no_check, "Do not run ONNX's checker (with full shape inference) on the result");
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt]() {
    return run_models(opt->files, opt->json,
                      [opt](const ModelJob& job, nlohmann::json* json) { return upgrade_one(*opt, job, json); });
  };
}

}  // namespace bnorm::cli
