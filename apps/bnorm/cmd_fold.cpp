// bnorm fold IN.onnx -o OUT.onnx | IN.onnx... --output-dir DIR  [--verify] [--json] [--external-data NAME]
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>

#include "batch.h"
#include "commands.h"
#include "core/error.h"
#include "core/log.h"
#include "model/model.h"
#include "model/tensor.h"
#include "transforms/fold.h"
#include "transforms/fold_verify.h"

namespace bnorm::cli {

namespace {

struct FoldOptions {
  OutputOptions files;
  bool json = false;
  bool verify = false;
  bool no_copy = false;
  bool keep_generated = false;
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

nlohmann::json to_json(const FoldReport& r, const ModelJob& job) {
  nlohmann::json folded = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& f : r.folded) {
    folded.push_back({{"graph", f.graph}, {"bn", f.bn}, {"bn_label", f.bn_label}, {"bn_index", f.bn_index},
                      {"producer", f.producer}, {"producer_label", f.producer_label}, {"producer_op", f.producer_op}});
  }
  for (const auto& s : r.skipped) {
    skipped.push_back({{"graph", s.graph}, {"bn", s.bn}, {"bn_label", s.bn_label}, {"bn_index", s.bn_index},
                       {"reason", s.reason}});
  }
  nlohmann::json generated = nlohmann::json::array();
  for (const auto& g : r.generated) {
    generated.push_back({{"graph", g.graph}, {"label", g.node_label}, {"source", g.source}, {"new_bytes", g.new_bytes}});
  }
  nlohmann::json out = {{"input", job.input}, {"output", job.output}, {"batch_norm_nodes", r.total}, {"folded", folded},
                        {"not_folded", skipped}, {"warnings", r.warnings}, {"generated", generated}};
  if (!r.generated.empty()) {
    out["model_bytes_before"] = r.model_bytes_before;
    out["model_bytes_after"] = r.model_bytes_after;
  }
  return out;
}

int fold_one(const FoldOptions& opt, const ModelJob& job, nlohmann::json* json) {
  Model model = load_model(job.input);
  SaveOptions save;
  save.external_data_name = opt.files.external_data;
  check_output_path(model, job.output, save);
  std::optional<Model> before;
  if (opt.verify) before = model;
  bnorm::FoldOptions fold_options;
  fold_options.rewrite_on_save = true;  // --verify reads the folded weights through the rewrites
  fold_options.keep_generated = opt.keep_generated;
  const FoldReport r = fold_batch_norms(model, fold_options);
  for (const auto& w : r.warnings) log().warn("{}", w);
  std::vector<FoldCheck> checks;
  if (before) checks = verify_folds(*before, model, r, opt.seed);
  const bool ok = std::all_of(checks.begin(), checks.end(), [](const FoldCheck& c) { return c.pass; });
  const bool nothing = r.folded.empty();
  const bool write = ok && !(nothing && opt.no_copy);
  if (write) save_model(model, job.output, save);
  if (json) {
    *json = to_json(r, job);
    if (before) (*json)["verify"] = to_json(checks);
    (*json)["written"] = write;
    (*json)["unchanged_copy"] = write && nothing;
    return ok ? kExitOk : kExitCheckFailed;
  }
  std::cout << fmt::format("folded {} of {} BatchNormalization nodes\n", r.folded.size(), r.total);
  for (const auto& f : r.folded) {
    // A named producer reads "into Conv 'conv1'"; an unnamed one by its label, "into Conv #3 -> '461'".
    const std::string into = f.producer.empty() ? f.producer_label : fmt::format("{} '{}'", f.producer_op, f.producer);
    std::cout << fmt::format("  folded   {} into {}{}\n", f.bn_label, into,
                             f.graph == "main" ? "" : " (" + f.graph + ")");
  }
  for (const auto& s : r.skipped) {
    std::cout << fmt::format("  kept     {}: {}{}\n", s.bn_label, s.reason, s.graph == "main" ? "" : " (" + s.graph + ")");
  }
  for (const auto& w : r.warnings) std::cout << fmt::format("  warning  {}\n", w);
  for (const auto& c : checks) {
    std::cout << fmt::format("  {}   {} into {} on X {} {}: max abs {:.3g}, max rel {:.3g}\n",
                             c.pass ? "verified" : "FAILED  ", c.bn,
                             c.producer_named ? "'" + c.producer + "'" : c.producer, c.type, shape_str(c.shape),
                             c.max_abs, c.max_rel);
  }
  if (!ok) {
    std::cout << "a fold is off beyond tolerance: nothing written\n";
    return kExitCheckFailed;
  }
  if (!write) {
    std::cout << "nothing to fold: nothing written (--no-copy)\n";
    return kExitOk;
  }
  std::cout << fmt::format("{}wrote {}{}\n", nothing ? "nothing to fold: " : "", job.output,
                           nothing ? ", an unchanged copy of the input" : "");
  return kExitOk;
}

}  // namespace

Runner add_fold(CLI::App& app) {
  auto opt = std::make_shared<FoldOptions>();
  CLI::App* sub = app.add_subcommand("fold", "Fold inference BatchNormalization into the preceding Conv, ConvTranspose, Gemm or MatMul");
  add_output_options(sub, opt->files);
  sub->add_flag("--verify", opt->verify, "Check each fold numerically; exit 1 (and write nothing) if one is off");
  sub->add_option("--seed", opt->seed, "Seed of --verify's random inputs (default 0)");
  sub->add_flag("--no-copy", opt->no_copy, "When there is nothing to fold, write nothing (and exit 0)");
  sub->add_flag("--keep-generated", opt->keep_generated,
                "Leave unfolded a node whose weights are generated (ConstantOfShape) rather than write them out");
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt]() {
    return run_models(opt->files, opt->json,
                      [opt](const ModelJob& job, nlohmann::json* json) { return fold_one(*opt, job, json); });
  };
}

}  // namespace bnorm::cli
