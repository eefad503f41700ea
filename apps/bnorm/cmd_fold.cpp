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
#include "cli_inputs.h"
#include "cli_parse.h"
#include "commands.h"
#include "eval_cli.h"
#include "core/error.h"
#include "core/log.h"
#include "model/model.h"
#include "model/tensor.h"
#include "api/outcomes.h"
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
  std::string seed_text, inputs_dir;
  std::vector<std::string> ranges, inputs, dims;
};

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
  api::FoldRequest request;
  request.verify = opt.verify;
  request.seed = opt.seed;
  request.ranges = parse_ranges(opt.ranges);
  request.inputs = read_inputs(opt.inputs);
  request.dims = parse_dims(opt.dims);
  if (!opt.inputs_dir.empty()) {
    for (auto& set : read_input_sets(opt.inputs_dir, model)) request.input_sets.push_back(std::move(set.inputs));
  }
  request.all_norms = opt.norms == "all";
  request.keep_generated = opt.keep_generated;
  request.input = job.input;
  request.output = job.output;
  const api::FoldOutcome o = api::fold_model(model, request);
  const bool ok = o.passed();
  const bool write = ok && !(o.nothing_folded() && opt.no_copy);
  // The report, whether or not the model could be saved.
  auto report = [&](bool saved) {
    if (json) {
      *json = api::fold_document(o, request, saved);
      return;
    }
    print_report(o.bn, request.all_norms ? &o.norms : nullptr);
    print_checks(o.checks);
    print_checks(o.norm_checks);
    if (o.whole) report_out() << verify_model_text(*o.whole, "the input model");
    if (o.verified && !o.whole) {
      report_out() << "  not run    the whole-model check (the per-fold checks are all there is): " << o.whole_not_run
                   << "\n";
    }
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
  const bool nothing = o.nothing_folded();
  report_out() << fmt::format("{}wrote {}{}\n", nothing ? "nothing to fold: " : "", written_name(job.target),
                              nothing ? ", an unchanged copy of the input" : "");
  return kExitOk;
}

}  // namespace

Runner add_fold(CLI::App& app) {
  auto opt = std::make_shared<FoldOptions>();
  CLI::App* sub = app.add_subcommand("fold", "Fold inference BatchNormalization into the preceding Conv, ConvTranspose, Gemm or MatMul");
  add_output_options(sub, opt->files);
  sub->add_flag("--verify", opt->verify,
                "Check each fold numerically, and the whole model where bnorm eval runs it; exit 1 (and write "
                "nothing) if one is off");
  sub->add_option("--seed", opt->seed_text, "Seed of --verify's random inputs (default 0)");
  sub->add_option("--input-range", opt->ranges,
                  "NAME=LO:HI: --verify draws NAME (a fold's X or a graph input) from [LO, HI] (repeatable)");
  sub->add_option("--input", opt->inputs, "NAME=FILE: a graph input of --verify's whole-model check (repeatable)");
  sub->add_option("--inputs", opt->inputs_dir,
                  "--verify: a folder of input sets (test_data_set_*/input_N.pb, or NAME.pb/.npy) for the whole-model check");
  sub->add_option("--dim", opt->dims, "NAME=VALUE: a symbolic dim of the whole-model check's inputs (repeatable)");
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
    refuse_without_effect(*sub, "--input-range", opt->verify, "without --verify: it sets --verify's random inputs");
    refuse_without_effect(*sub, "--input", opt->verify, "without --verify: it gives --verify's inputs");
    refuse_without_effect(*sub, "--inputs", opt->verify, "without --verify: it gives --verify's inputs");
    refuse_without_effect(*sub, "--dim", opt->verify, "without --verify: it sizes --verify's random inputs");
    if (!opt->inputs_dir.empty() && (!opt->inputs.empty() || !opt->dims.empty())) {
      throw Error(ErrorKind::usage, "--inputs gives every input of the whole-model check: drop --input and --dim");
    }
    if (given(*sub, "--seed")) opt->seed = seed_value("--seed", opt->seed_text);
    return run_models(opt->files, opt->json, "fold",
                      [opt](const ModelJob& job, nlohmann::json* json, bool* written) { return fold_one(*opt, job, json, written); });
  };
}

}  // namespace bnorm::cli
