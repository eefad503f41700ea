// bnorm upgrade IN.onnx -o OUT.onnx | IN.onnx... --output-dir DIR  [--to N] [--inference] [--no-casts] [--no-check] [--json]
//   [--external-data NAME] [--verify [--seed S] [--dim NAME=VALUE]... [--input-range NAME=LO:HI]...] [--fuse-norms]
// --verify runs the input and the converted model through the evaluator on
// the same random inputs; outputs off beyond tolerance: exit 1, nothing written.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
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
#include "api/outcomes.h"
#include "cli_inputs.h"
#include "eval_cli.h"
#include "transforms/upgrade/upgrade.h"
#include "transforms/upgrade/verify.h"

namespace bnorm::cli {

namespace {

struct UpgradeCliOptions {
  OutputOptions files;
  int64_t to = kUpgradeDefaultOpset;
  bool inference = false, no_check = false, json = false, verify = false, no_casts = false;
  bool fuse_norms = false;
  uint64_t seed = 0;
  std::vector<std::string> dims, ranges, inputs;
  std::string to_text, seed_text, inputs_dir;
};

void print_checks(const UpgradeVerification& v) {
  for (const auto& c : v.outputs) {
    report_out() << fmt::format("  {}   output '{}' {} {}: max abs {:.3g}, max rel {:.3g}{}\n",
                             c.pass ? "verified" : "FAILED  ", c.output, c.type, shape_str(c.shape), c.max_abs,
                             c.max_rel, c.problem.empty() ? "" : " (" + c.problem + ")");
  }
  if (v.compared.values.empty()) return;
  report_out() << verify_model_text(v.compared, "the input model");
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void print_text(const UpgradeReport& r, const UpgradeCliOptions& o, const ModelJob& job, bool written) {
  if (r.from_opset == r.to_opset) {
    report_out() << fmt::format("{} is already at opset {} (IR {}): nothing to convert{}\n", job.input, r.to_opset,
                             r.to_ir, r.from_ir == r.to_ir ? "" : fmt::format(" (IR {} -> {})", r.from_ir, r.to_ir));
  } else {
    report_out() << fmt::format("{} {} from opset {} (IR {}) to opset {} (IR {})\n",
                             r.to_opset > r.from_opset ? "upgraded" : "downgraded", job.input, r.from_opset, r.from_ir,
                             r.to_opset, r.to_ir);
  }
  for (const auto& n : r.nodes) {
    report_out() << fmt::format("  {} ({}) {} -> {}{}{}\n", n.label, n.op, n.from, n.to,
                             n.steps.empty() ? "" : ": steps " + join(n.steps),
                             n.graph == "main" ? "" : " (" + n.graph + ")");
    if (!n.dropped.empty()) report_out() << fmt::format("      dropped  {}\n", join(n.dropped));
    if (!n.set.empty()) report_out() << fmt::format("      set      {}\n", join(n.set));
    if (!n.added.empty()) report_out() << fmt::format("      added    {}\n", join(n.added));
    for (const auto& w : n.warnings) report_out() << fmt::format("      warning  {}\n", w);
  }
  for (const auto& w : r.rewrites) {
    report_out() << fmt::format("  {} ({}) {}{}\n", w.label, w.op, w.what, w.added.empty() ? "" : "; added " + join(w.added));
  }
  for (const auto& m : r.not_fused) {
    report_out() << fmt::format("  {} not fused into {}{}: {}\n", m.label, m.op, m.graph == "main" ? "" : " (" + m.graph + ")",
                             m.why);
  }
  if (!r.made_inference.empty()) report_out() << fmt::format("made inference (--inference): {}\n", join(r.made_inference));
  if (!r.removed.empty()) report_out() << fmt::format("removed, no longer read: {}\n", join(r.removed));
  if (!written) return;
  report_out() << fmt::format("wrote {}{}\n", written_name(job.target),
                       o.no_check                              ? " (not checked: --no-check)"
                       : r.to_opset > kOnnxConverterMaxOpset ? " (passes bnorm's structural check)"
                                                               : " (passes ONNX's checker and bnorm's structural check)");
}

int upgrade_one(const UpgradeCliOptions& opt, const ModelJob& job, nlohmann::json* json, bool* written) {
  api::UpgradeRequest request;
  request.to = opt.to;
  request.inference = opt.inference;
  request.casts = !opt.no_casts;
  request.fuse_norms = opt.fuse_norms;
  request.check = !opt.no_check;
  request.verify = opt.verify;
  request.seed = opt.seed;
  request.dims = parse_dims(opt.dims);
  request.ranges = parse_ranges(opt.ranges);
  request.inputs = read_inputs(opt.inputs);
  request.input = job.input;
  request.output = job.output;
  Model model = load_model(job.input);
  SaveOptions save;
  save.external_data_name = opt.files.external_data;
  check_output_path(model, job.target, save);
  std::optional<Model> before;
  if (opt.verify) before = model;
  if (!opt.inputs_dir.empty()) {
    for (auto& set : read_input_sets(opt.inputs_dir, model)) request.input_sets.push_back(std::move(set.inputs));
  }
  api::UpgradeOutcome o = api::convert_model(model, request);
  // The conversion's report, printed whether or not the result passes the
  // check, verifies and can be saved.
  auto report = [&](bool saved) {
    if (json) {
      *json = api::upgrade_document(o, request, saved);
      return;
    }
    if (!saved && !o.passed()) {
      print_checks(o.verification);
      return;
    }
    print_text(o.report, opt, job, saved);
    print_checks(o.verification);
  };
  try {
    api::check_and_verify(o, before ? &*before : nullptr, model, request);
    if (o.passed()) {
      save_model(model, job.target, save);
      *written = true;
    }
  } catch (Error&) {
    report(false);
    throw;
  }
  report(o.passed());
  if (!o.passed()) {
    if (!json) report_out() << "an output of the converted model is off beyond tolerance: nothing written\n";
    return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace

Runner add_upgrade(CLI::App& app) {
  auto opt = std::make_shared<UpgradeCliOptions>();
  CLI::App* sub = app.add_subcommand("upgrade", "Convert a whole model to another opset (1 to 28), BatchNormalization "
                                                "and InstanceNormalization exactly");
  add_output_options(sub, opt->files);
  sub->add_option("--to", opt->to_text, "Target opset, 1 to 28 (default 15), lower or higher than the model's");
  sub->add_flag("--inference", opt->inference,
                "The model is an inference model: training BatchNormalization nodes become inference nodes");
  sub->add_flag("--no-casts", opt->no_casts,
                "Going down, refuse (naming every node) instead of computing bfloat16 nodes in float between Casts "
                "where the target version of their op has no bfloat16");
  sub->add_flag("--fuse-norms", opt->fuse_norms,
                "Replace LayerNormalization, RMSNormalization and GroupNormalization decompositions by the op where "
                "the target opset has it (17, 23, 18); the report names each fusion and each one left, with why");
  sub->add_flag("--no-check", opt->no_check, "Do not run ONNX's checker (with full shape inference) on the result");
  sub->add_flag("--verify", opt->verify,
                "Run the input and the converted model on the same inputs (random unless given); exit 1 (and write "
                "nothing) if any value both compute is off beyond the input model's own rounding");
  sub->add_option("--input", opt->inputs, "NAME=FILE: an input of --verify from a .pb or .npy file (repeatable)");
  sub->add_option("--inputs", opt->inputs_dir,
                  "--verify: a folder of input sets (test_data_set_*/input_N.pb, or NAME.pb/.npy) instead of random ones");
  sub->add_option("--seed", opt->seed_text, "Seed of --verify's random inputs (default 0)");
  sub->add_option("--dim", opt->dims, "NAME=VALUE: the size of a symbolic dim, for --verify (repeatable)");
  sub->add_option("--input-range", opt->ranges,
                  "NAME=LO:HI: --verify draws input NAME from [LO, HI] (integers; floats [LO, HI)) (repeatable)");
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt, sub]() {
    if (given(*sub, "--to")) opt->to = int_value("--to", opt->to_text, INT64_MIN, INT64_MAX);
    refuse_without_effect(*sub, "--seed", opt->verify, "without --verify: it seeds --verify's random inputs");
    refuse_without_effect(*sub, "--dim", opt->verify, "without --verify: it sizes --verify's random inputs");
    refuse_without_effect(*sub, "--input-range", opt->verify, "without --verify: it sets --verify's random inputs");
    refuse_without_effect(*sub, "--input", opt->verify, "without --verify: it gives --verify's inputs");
    refuse_without_effect(*sub, "--inputs", opt->verify, "without --verify: it gives --verify's inputs");
    if (!opt->inputs_dir.empty() && (!opt->inputs.empty() || given(*sub, "--seed") || !opt->dims.empty() ||
                                     !opt->ranges.empty())) {
      throw Error(ErrorKind::usage, "--inputs gives every input: drop --input, --seed, --dim and --input-range");
    }
    if (given(*sub, "--seed")) opt->seed = seed_value("--seed", opt->seed_text);
    return run_models(opt->files, opt->json, "upgrade",
                      [opt](const ModelJob& job, nlohmann::json* json, bool* written) { return upgrade_one(*opt, job, json, written); });
  };
}

}  // namespace bnorm::cli
