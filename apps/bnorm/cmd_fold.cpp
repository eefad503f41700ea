// bnorm fold IN.onnx -o OUT.onnx [--json] [--external-data NAME]
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "model/model.h"
#include "model/tensor.h"
#include "transforms/fold.h"
#include "transforms/fold_verify.h"

namespace bnorm::cli {

namespace {

struct FoldOptions {
  std::string input, output, external_data;
  bool json = false;
  bool verify = false;
  uint64_t seed = 0;
};

nlohmann::json to_json(const std::vector<FoldCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : checks) {
    out.push_back({{"graph", c.graph}, {"bn", c.bn}, {"producer", c.producer}, {"type", c.type}, {"shape", c.shape},
                   {"max_abs", c.max_abs}, {"max_rel", c.max_rel}, {"rtol", c.rtol},
                   {"pass", c.pass}});
  }
  return out;
}

nlohmann::json to_json(const FoldReport& r, const FoldOptions& o) {
  nlohmann::json folded = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& f : r.folded) {
    folded.push_back({{"graph", f.graph}, {"bn", f.bn}, {"producer", f.producer}, {"producer_op", f.producer_op}});
  }
  for (const auto& s : r.skipped) skipped.push_back({{"graph", s.graph}, {"bn", s.bn}, {"reason", s.reason}});
  return {{"input", o.input}, {"output", o.output}, {"batch_norm_nodes", r.total}, {"folded", folded},
          {"not_folded", skipped}};
}

}  // namespace

Runner add_fold(CLI::App& app) {
  auto opt = std::make_shared<FoldOptions>();
  CLI::App* sub = app.add_subcommand("fold", "Fold inference BatchNormalization into the preceding Conv, ConvTranspose, Gemm or MatMul");
  sub->add_option("model", opt->input, "The .onnx model to read (never modified)")->required();
  sub->add_option("-o,--output", opt->output, "Where to write the folded model")->required();
  sub->add_option("--external-data", opt->external_data,
                  "Side file for external data, relative to the output (default: OUTPUT.data)");
  sub->add_flag("--verify", opt->verify, "Check each fold numerically; exit 1 (and write nothing) if one is off");
  sub->add_option("--seed", opt->seed, "Seed of --verify's random inputs (default 0)");
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt]() {
    Model model = load_model(opt->input);
    std::optional<Model> before;
    if (opt->verify) before = model;
    const FoldReport r = fold_batch_norms(model);
    std::vector<FoldCheck> checks;
    if (before) checks = verify_folds(*before, model, r, opt->seed);
    const bool ok = std::all_of(checks.begin(), checks.end(), [](const FoldCheck& c) { return c.pass; });
    if (ok) {
      SaveOptions save;
      save.external_data_name = opt->external_data;
      save_model(model, opt->output, save);
    }
    if (opt->json) {
      auto j = to_json(r, *opt);
      if (before) j["verify"] = to_json(checks);
      j["written"] = ok;
      std::cout << json_text(j) << "\n";
      return ok ? 0 : 1;
    }
    std::cout << fmt::format("folded {} of {} BatchNormalization nodes\n", r.folded.size(), r.total);
    for (const auto& f : r.folded) {
      std::cout << fmt::format("  folded   {} into {} '{}'{}\n", f.bn, f.producer_op, f.producer,
                               f.graph == "main" ? "" : " (" + f.graph + ")");
    }
    for (const auto& s : r.skipped) {
      std::cout << fmt::format("  kept     {}: {}{}\n", s.bn, s.reason, s.graph == "main" ? "" : " (" + s.graph + ")");
    }
    for (const auto& c : checks) {
      std::cout << fmt::format("  {}   {} into '{}' on X {} {}: max abs {:.3g}, max rel {:.3g}\n",
                               c.pass ? "verified" : "FAILED  ", c.bn, c.producer, c.type, shape_str(c.shape), c.max_abs,
                               c.max_rel);
    }
    if (!ok) {
      std::cout << "a fold is off beyond tolerance: nothing written\n";
      return 1;
    }
    std::cout << fmt::format("wrote {}\n", opt->output);
    return 0;
  };
}

}  // namespace bnorm::cli
