// bnorm fold IN.onnx -o OUT.onnx | IN.onnx... --output-dir DIR  [--verify] [--json] [--external-data NAME]
//   [--keep-generated] [--norms bn|all]
// BatchNormalization folds first; with --norms all, then the affine of
// LayerNormalization/RMSNormalization/GroupNormalization into its consumer
// (transforms/fold/norm_affine.h). --verify checks BN folds on the model as it was before
// any fold against the model after the BN folds, and norm folds on that
// model against the final one, so each check sees exactly its own fold.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>

#include "batch.h"
#include "cli_parse.h"
#include "commands.h"
#include "core/error.h"
#include "core/log.h"
#include "model/model.h"
#include "model/tensor.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/verify.h"
#include "transforms/fold/norm_affine.h"

namespace bnorm::cli {

namespace {

struct FoldOptions {
  OutputOptions files;
  bool json = false;
  bool verify = false;
  bool no_copy = false;
  bool keep_generated = false;
  std::string norms = "bn";
  uint64_t seed = 0;
  std::string seed_text;
};

nlohmann::json to_json(const std::vector<FoldCheck>& checks, bool norm) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : checks) {
    out.push_back({{"graph", c.graph}, {norm ? "norm" : "bn", c.bn}, {norm ? "consumer" : "producer", c.producer},
                   {"type", c.type}, {"shape", c.shape}, {"max_abs", c.max_abs}, {"max_rel", c.max_rel},
                   {"rtol", c.rtol}, {"pass", c.pass}});
  }
  return out;
}

nlohmann::json generated_json(const std::vector<FoldReport::Generated>& gen) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : gen) {
    out.push_back({{"graph", g.graph}, {"label", g.node_label}, {"source", g.source}, {"new_bytes", g.new_bytes}});
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
  nlohmann::json out = {{"input", job.input}, {"output", job.output}, {"batch_norm_nodes", r.total}, {"folded", folded},
                        {"not_folded", skipped}, {"warnings", r.warnings}, {"generated", generated_json(r.generated)}};
  if (!r.generated.empty()) {
    out["model_bytes_before"] = r.model_bytes_before;
    out["model_bytes_after"] = r.model_bytes_after;
  }
  return out;
}

// The norm folds' fields, added to the BN report's object (--norms all).
void add_norms_json(const NormFoldReport& r, nlohmann::json& out) {
  nlohmann::json folded = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& f : r.folded) {
    folded.push_back({{"graph", f.graph}, {"norm", f.norm}, {"norm_op", f.norm_op}, {"norm_label", f.norm_label},
                      {"norm_index", f.norm_index}, {"consumer", f.consumer}, {"consumer_op", f.consumer_op},
                      {"consumer_label", f.consumer_label}, {"bias_into", f.bias_into}});
  }
  for (const auto& s : r.skipped) {
    skipped.push_back({{"graph", s.graph}, {"norm", s.norm}, {"norm_op", s.norm_op}, {"norm_label", s.norm_label},
                       {"norm_index", s.norm_index}, {"reason", s.reason}});
  }
  out["norm_nodes"] = r.total;
  out["norms_folded"] = folded;
  out["norms_not_folded"] = skipped;
  for (const auto& w : r.warnings) out["warnings"].push_back(w);
  for (const auto& g : generated_json(r.generated)) out["generated"].push_back(g);
  if (!r.generated.empty()) {
    out["norm_model_bytes_before"] = r.model_bytes_before;
    out["norm_model_bytes_after"] = r.model_bytes_after;
  }
}

std::string in_graph(const std::string& graph) { return graph == "main" ? "" : " (" + graph + ")"; }

void print_checks(const std::vector<FoldCheck>& checks) {
  for (const auto& c : checks) {
    report_out() << fmt::format("  {}   {} into {} on X {} {}: max abs {:.3g}, max rel {:.3g}\n",
                             c.pass ? "verified" : "FAILED  ", c.bn,
                             c.producer_named ? "'" + c.producer + "'" : c.producer, c.type, shape_str(c.shape),
                             c.max_abs, c.max_rel);
  }
}

// "LayerNormalization 'ln1'"; an unnamed node by its label, which names the op.
std::string norm_text(const std::string& name, const std::string& op, const std::string& label) {
  return name.empty() ? label : fmt::format("{} '{}'", op, name);
}

void print_report(const FoldReport& r, const NormFoldReport* n) {
  report_out() << fmt::format("folded {} of {} BatchNormalization nodes\n", r.folded.size(), r.total);
  for (const auto& f : r.folded) {
    // A named producer reads "into Conv 'conv1'"; an unnamed one by its label, "into Conv #3 -> '461'".
    const std::string into = f.producer.empty() ? f.producer_label : fmt::format("{} '{}'", f.producer_op, f.producer);
    report_out() << fmt::format("  folded   {} into {}{}\n", f.bn_label, into, in_graph(f.graph));
  }
  for (const auto& s : r.skipped) report_out() << fmt::format("  kept     {}: {}{}\n", s.bn_label, s.reason, in_graph(s.graph));
  for (const auto& w : r.warnings) report_out() << fmt::format("  warning  {}\n", w);
  if (!n) return;
  report_out() << fmt::format("folded the affine of {} of {} LayerNormalization, RMSNormalization and GroupNormalization "
                           "nodes\n", n->folded.size(), n->total);
  for (const auto& f : n->folded) {
    const std::string into = f.consumer.empty() ? f.consumer_label : fmt::format("{} '{}'", f.consumer_op, f.consumer);
    const std::string bias = f.bias_into.empty() || f.bias_into == "C" || f.bias_into == "B"
                                 ? "" : fmt::format(", its bias into {}", f.bias_into);
    report_out() << fmt::format("  folded   {} into {}{}{}\n", norm_text(f.norm, f.norm_op, f.norm_label), into, bias,
                             in_graph(f.graph));
  }
  for (const auto& s : n->skipped) {
    report_out() << fmt::format("  kept     {}: {}{}\n", norm_text(s.norm, s.norm_op, s.norm_label), s.reason,
                             in_graph(s.graph));
  }
  for (const auto& w : n->warnings) report_out() << fmt::format("  warning  {}\n", w);
}

int fold_one(const FoldOptions& opt, const ModelJob& job, nlohmann::json* json, bool* written) {
  Model model = load_model(job.input);
  SaveOptions save;
  save.external_data_name = opt.files.external_data;
  check_output_path(model, job.target, save);
  const bool norms = opt.norms == "all";
  std::optional<Model> before, mid;
  if (opt.verify) before = model;
  bnorm::FoldOptions fold_options;
  fold_options.rewrite_on_save = true;  // --verify reads the folded weights through the rewrites
  fold_options.keep_generated = opt.keep_generated;
  Stopwatch took;
  const FoldReport r = fold_batch_norms(model, fold_options);
  log().debug("folded {} of {} BatchNormalization nodes ({:.1f} ms)", r.folded.size(), r.total, took.ms());
  if (opt.verify && norms) mid = model;
  NormFoldReport n;
  if (norms) {
    took = Stopwatch();
    n = fold_norm_affines(model, fold_options);
    log().debug("folded the affine of {} of {} normalization nodes ({:.1f} ms)", n.folded.size(), n.total, took.ms());
  }
  for (const auto& w : r.warnings) log().warn("{}", w);
  for (const auto& w : n.warnings) log().warn("{}", w);
  std::vector<FoldCheck> checks, norm_checks;
  took = Stopwatch();
  if (before) checks = verify_folds(*before, mid ? *mid : model, r, opt.seed);
  if (mid) norm_checks = verify_norm_folds(*mid, model, n, opt.seed);
  if (before) log().debug("verified {} folds ({:.1f} ms)", checks.size() + norm_checks.size(), took.ms());
  auto pass = [](const FoldCheck& c) { return c.pass; };
  const bool ok = std::all_of(checks.begin(), checks.end(), pass) &&
                  std::all_of(norm_checks.begin(), norm_checks.end(), pass);
  const bool nothing = r.folded.empty() && n.folded.empty();
  const bool write = ok && !(nothing && opt.no_copy);
  // The report, whether or not the model could be saved.
  auto report = [&](bool written) {
    if (json) {
      *json = to_json(r, job);
      if (norms) add_norms_json(n, *json);
      if (before) (*json)["verify"] = to_json(checks, false);
      if (before && norms) (*json)["verify_norms"] = to_json(norm_checks, true);
      (*json)["written"] = written;
      (*json)["unchanged_copy"] = written && nothing;
      return;
    }
    print_report(r, norms ? &n : nullptr);
    print_checks(checks);
    print_checks(norm_checks);
  };
  if (write) {
    try {
      save_model(model, job.target, save);
      *written = true;
    } catch (Error&) {
      report(false);
      throw;
    }
  }
  report(write);
  if (json) return ok ? kExitOk : kExitCheckFailed;
  if (!ok) {
    report_out() << "a fold is off beyond tolerance: nothing written\n";
    return kExitCheckFailed;
  }
  if (!write) {
    report_out() << "nothing to fold: nothing written (--no-copy)\n";
    return kExitOk;
  }
  report_out() << fmt::format("{}wrote {}{}\n", nothing ? "nothing to fold: " : "", written_name(job.target),
                       nothing ? ", an unchanged copy of the input" : "");
  return kExitOk;
}

}  // namespace

Runner add_fold(CLI::App& app) {
  auto opt = std::make_shared<FoldOptions>();
  CLI::App* sub = app.add_subcommand("fold", "Fold inference BatchNormalization into the preceding Conv, ConvTranspose, Gemm or MatMul");
  add_output_options(sub, opt->files);
  sub->add_flag("--verify", opt->verify, "Check each fold numerically; exit 1 (and write nothing) if one is off");
  sub->add_option("--seed", opt->seed_text, "Seed of --verify's random inputs (default 0)");
  sub->add_flag("--no-copy", opt->no_copy, "When there is nothing to fold, write nothing (and exit 0)");
  sub->add_flag("--keep-generated", opt->keep_generated,
                "Leave unfolded a node whose weights are generated (ConstantOfShape) rather than write them out");
  sub->add_option("--norms", opt->norms,
                  "bn (default): fold BatchNormalization only; all: also fold the scale and bias of "
                  "LayerNormalization, RMSNormalization and GroupNormalization into the Gemm, MatMul or 1x1 Conv "
                  "that reads them")
      ->check(CLI::IsMember({"bn", "all"}));
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt, sub]() {
    refuse_without_effect(*sub, "--seed", opt->verify, "without --verify: it seeds --verify's random inputs");
    if (given(*sub, "--seed")) opt->seed = seed_value("--seed", opt->seed_text);
    return run_models(opt->files, opt->json, "fold",
                      [opt](const ModelJob& job, nlohmann::json* json, bool* written) { return fold_one(*opt, job, json, written); });
  };
}

}  // namespace bnorm::cli
