// bnorm upgrade IN.onnx -o OUT.onnx [--to N] [--inference] [--no-check] [--json] [--external-data NAME]
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/log.h"
#include "model/model.h"
#include "transforms/upgrade.h"

namespace bnorm::cli {

namespace {

struct UpgradeCliOptions {
  std::string input, output, external_data;
  int64_t to = kUpgradeMaxOpset;
  bool inference = false, no_check = false, json = false;
};

nlohmann::json to_json(const UpgradeReport& r, const UpgradeCliOptions& o) {
  nlohmann::json nodes = nlohmann::json::array(), rewrites = nlohmann::json::array();
  for (const auto& n : r.nodes) {
    nodes.push_back({{"graph", n.graph}, {"name", n.name}, {"op", n.op}, {"from", n.from}, {"to", n.to},
                     {"steps", n.steps}, {"dropped", n.dropped}, {"set", n.set}, {"added", n.added},
                     {"warnings", n.warnings}, {"made_inference", n.made_inference}});
  }
  for (const auto& w : r.rewrites) {
    rewrites.push_back({{"graph", w.graph}, {"name", w.name}, {"op", w.op}, {"what", w.what}, {"added", w.added}});
  }
  return {{"input", o.input}, {"output", o.output}, {"from_opset", r.from_opset}, {"to_opset", r.to_opset},
          {"from_ir", r.from_ir}, {"to_ir", r.to_ir}, {"checked", !o.no_check}, {"norm_nodes", nodes},
          {"rewrites", rewrites}, {"made_inference", r.made_inference}, {"warnings", r.warnings}};
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void print_text(const UpgradeReport& r, const UpgradeCliOptions& o) {
  std::cout << fmt::format("upgraded {} from opset {} (IR {}) to opset {} (IR {})\n", o.input, r.from_opset,
                           r.from_ir, r.to_opset, r.to_ir);
  for (const auto& n : r.nodes) {
    std::cout << fmt::format("  {} ({}) {} -> {}{}{}\n", n.name, n.op, n.from, n.to,
                             n.steps.empty() ? "" : ": steps " + join(n.steps),
                             n.graph == "main" ? "" : " (" + n.graph + ")");
    if (!n.dropped.empty()) std::cout << fmt::format("      dropped  {}\n", join(n.dropped));
    if (!n.set.empty()) std::cout << fmt::format("      set      {}\n", join(n.set));
    if (!n.added.empty()) std::cout << fmt::format("      added    {}\n", join(n.added));
    for (const auto& w : n.warnings) std::cout << fmt::format("      warning  {}\n", w);
  }
  for (const auto& w : r.rewrites) {
    std::cout << fmt::format("  {} ({}) {}{}\n", w.name, w.op, w.what, w.added.empty() ? "" : "; added " + join(w.added));
  }
  if (!r.made_inference.empty()) std::cout << fmt::format("made inference (--inference): {}\n", join(r.made_inference));
  std::cout << fmt::format("wrote {}{}\n", o.output, o.no_check ? " (not checked: --no-check)" : " (passes ONNX's checker)");
}

}  // namespace

Runner add_upgrade(CLI::App& app) {
  auto opt = std::make_shared<UpgradeCliOptions>();
  CLI::App* sub = app.add_subcommand("upgrade", "Convert a whole model to another opset (1 to 15), BatchNormalization "
                                                "and InstanceNormalization exactly");
  sub->add_option("model", opt->input, "The .onnx model to read (never modified)")->required();
  sub->add_option("-o,--output", opt->output, "Where to write the converted model")->required();
  sub->add_option("--to", opt->to, "Target opset, 1 to 15 (default 15), lower or higher than the model's");
  sub->add_flag("--inference", opt->inference,
                "The model is an inference model: training BatchNormalization nodes become inference nodes");
  sub->add_flag("--no-check", opt->no_check, "Do not run ONNX's checker (with full shape inference) on the result");
  sub->add_option("--external-data", opt->external_data,
                  "Side file for external data, relative to the output (default: OUTPUT.data)");
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt]() {
    Model model = load_model(opt->input);
    UpgradeOptions options;
    options.target = opt->to;
    options.inference = opt->inference;
    const UpgradeReport r = upgrade_model(model, options);
    for (const auto& w : r.warnings) log().warn("{}", w);
    if (!opt->no_check) check_model_full(model.proto);
    SaveOptions save;
    save.external_data_name = opt->external_data;
    save_model(model, opt->output, save);
    if (opt->json) std::cout << json_text(to_json(r, *opt)) << "\n";
    else print_text(r, *opt);
    return 0;
  };
}

}  // namespace bnorm::cli
