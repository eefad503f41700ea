// bnorm eval: conformance folders, one model on given or random inputs, or
// two models compared on the same inputs.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "api/outcomes.h"
#include "cli_inputs.h"
#include "cli_parse.h"
#include "commands.h"
#include "eval_cli.h"
#include "core/error.h"
#include "core/log.h"
#include "eval/backend/folders.h"
#include "eval/report/compare.h"
#include "eval/run/float64.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "model/tensor_file.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace bnorm::cli {


std::string diff_text(const Diff& d) {
  if (!d.problem.empty()) return d.problem;
  return fmt::format("max abs {:.3g}, max rel {:.3g}{}", d.max_abs, d.max_rel,
                     d.pass ? "" : fmt::format(", {} of {} outside tolerance", d.mismatches, d.elements));
}

namespace {

int run_dirs(const EvalCliOptions& o) {
  Tolerance tol;
  if (o.rtol) tol.rtol = *o.rtol;
  if (o.atol) tol.atol = *o.atol;
  int passed = 0, failed = 0, skipped = 0, errors = 0;
  std::vector<DirResult> results;
  for (const auto& given_root : o.paths) {
    // "dir/" names the folder "dir", not "".
    fs::path root = fs::path(given_root).lexically_normal();
    if (root.filename().empty() && root.has_parent_path()) root = root.parent_path();
    for (const auto& dir : find_backend_tests(root)) {
      const std::string name = dir.filename().string();
      if (!o.filter.empty() && fnmatch(o.filter.c_str(), name.c_str(), 0) != 0) continue;
      BackendTestResult r;
      const auto start = std::chrono::steady_clock::now();
      try {
        r = run_backend_test(dir, tol);
      } catch (const Error& e) {
        // One broken folder does not stop the others; it sets the exit code.
        r.name = name;
        r.error = e.message();
      }
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      if (r.dir.empty()) r.dir = dir;
      results.push_back({r, took.count()});
      if (!r.error.empty()) ++errors;
      else if (r.skipped) ++skipped;
      else if (r.pass()) ++passed;
      else ++failed;
      if (o.json) continue;
      if (r.skipped) {
        report_out() << fmt::format("SKIP {}: {}\n", r.name, r.skip_reason);
        continue;
      }
      if (!r.error.empty()) {
        report_out() << fmt::format("ERROR {}: {}\n", r.name, r.error);
        continue;
      }
      report_out() << fmt::format("{} {}\n", r.pass() ? "PASS" : "FAIL", r.name);
      for (const auto& ds : r.data_sets)
        for (const auto& out : ds.outputs)
          report_out() << fmt::format("     {} {} {}: {}\n", out.diff.pass ? "ok  " : "FAIL", ds.name, out.name,
                                   diff_text(out.diff));
    }
  }
  if (passed + failed + skipped + errors == 0) {
    throw Error(ErrorKind::usage, fmt::format("--filter '{}' matches no test folder", o.filter));
  }
  if (!o.junit.empty()) write_report_file(o.junit_target, dirs_junit(results));
  if (!o.report.empty()) write_report_file(o.report_target, conformance_report_html(results, tol));
  if (o.json) {
    report_out() << json_text(api::folders_document(results, tol)) << "\n";
  } else {
    report_out() << fmt::format("{} passed, {} failed, {} skipped{}\n", passed, failed, skipped,
                             errors ? fmt::format(", {} could not run", errors) : "");
  }
  if (errors > 0) return kExitBadInput;
  return failed > 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace

// Through the commands' one reader of --input, --random and --dim (cli_inputs.h).
std::map<std::string, Tensor> gather_inputs(const EvalCliOptions& o, const Model& model, bool random) {
  InputOptions in;
  in.inputs = o.inputs;
  in.dims = o.dims;
  in.ranges = o.ranges;
  if (random) in.seed = o.seed.value_or(0);
  return model_inputs(in, model);
}

namespace {

std::string file_stem(const std::string& name) {
  std::string s = name;
  for (auto& c : s)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return s.empty() ? "output" : s;
}

// --output-dir exists (made now, parents too) and is a directory, before any work.
void prepare_output_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw Error(ErrorKind::usage, fmt::format("--output-dir '{}' cannot be made a directory{}", dir,
                                              ec ? ": " + ec.message() : ": a file of that name exists"));
  }
}

int run_model(const EvalCliOptions& o) {
  prepare_output_dir(o.output_dir);
  const Model model = load_model(o.paths[0]);
  const auto inputs = gather_inputs(o, model, o.seed.has_value());
  const api::ModelRuns runs = api::run_model(model, inputs, o.float64, o.repeat);
  const std::map<std::string, Tensor>& outputs = runs.outputs;
  std::vector<api::OutputStats> outs;
  for (const auto& out : model.proto.graph().output()) {
    const auto it = outputs.find(out.name());
    if (it == outputs.end()) continue;
    const Tensor& t = it->second;
    std::vector<std::string> files;
    if (!o.output_dir.empty()) {
      const fs::path base = fs::path(o.output_dir) / file_stem(out.name());
      write_tensor_file(t, base.string() + ".pb");
      files.push_back(base.string() + ".pb");
      if (t.dtype != DType::bfloat16) {
        write_tensor_file(t, base.string() + ".npy");
        files.push_back(base.string() + ".npy");
      }
    }
    if (o.json) {
      outs.push_back({out.name(), t, files});
    } else {
      const api::Stats st = api::stats_of(t);
      report_out() << fmt::format("{}: {} {}  min {:.6g}  max {:.6g}  mean {:.6g}{}\n", out.name(), dtype_name(t.dtype),
                                  shape_str(t.dims), st.min, st.max, st.mean, files.empty() ? "" : "  -> " + files[0]);
    }
  }
  std::optional<api::Timing> timing;
  if (o.repeat > 1) timing = runs.timing;
  if (o.json) {
    report_out() << json_text(api::model_document(o.paths[0], outs, timing)) << "\n";
  } else if (timing) {
    report_out() << api::timing_text(*timing) << "\n";
  }
  if (timing && !timing->differs.empty()) {
    log().error("run {} of {} gave other bits than run 1 for output '{}': the evaluation is not deterministic",
                timing->differing_run, o.repeat, timing->differs);
    return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace

namespace {

// --junit and --report are checked before any work; one of them may be
// standard output, and then the results are printed to stderr.
void plan_report_outputs(EvalCliOptions& o) {
  if (!o.junit.empty()) o.junit_target = plan_output(o.junit);
  if (!o.report.empty()) o.report_target = plan_output(o.report);
  if (!o.junit.empty() && !o.report.empty() && o.junit_target.is_stdout() && o.report_target.is_stdout()) {
    throw Error(ErrorKind::usage, "--junit and --report cannot both go to standard output");
  }
  if ((!o.junit.empty() && o.junit_target.is_stdout()) || (!o.report.empty() && o.report_target.is_stdout())) {
    report_to_stderr(o.json);
  }
}

}  // namespace

Runner add_eval(CLI::App& app) {
  auto opt = std::make_shared<EvalCliOptions>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate models: conformance folders, one model, or two compared");
  sub->add_option("paths", opt->paths, "Test folders (ONNX backend layout, or folders of them), or one .onnx model")
      ->required();
  sub->add_option("--filter", opt->filter, "Only test folders whose name matches this glob");
  sub->add_option("--input", opt->inputs, "NAME=FILE: an input from a .pb or .npy file (repeatable)");
  sub->add_option("--random", opt->seed_text, "Fill inputs not given with seeded random data");
  sub->add_option("--dim", opt->dims, "NAME=VALUE: the size of a symbolic dim, for --random (repeatable)");
  sub->add_option("--input-range", opt->ranges,
                  "NAME=LO:HI: --random draws input NAME from [LO, HI] (integers; floats [LO, HI)) (repeatable)");
  sub->add_option("--output-dir", opt->output_dir, "Write each output as NAME.pb and NAME.npy into this folder");
  sub->add_option("--compare", opt->compare, "A second model to run on the same inputs and compare with");
  sub->add_option("--tolerance", opt->tolerance,
                  "--compare: auto (default: within A's own rounding, from A run in float64) or fixed (--rtol/--atol)");
  sub->add_option("--error-stat", opt->error_stat,
                  "--compare, where A has no float64 evaluation: median, p90, p99, max (default) or mean of |B - A|");
  sub->add_option("--rtol", opt->rtol_text, "Relative tolerance (folders: 1e-3; --compare fixed: 1e-4, 1e-2 for 16-bit types)");
  sub->add_option("--atol", opt->atol_text, "Absolute tolerance (folders: 1e-7; --compare fixed: 1e-5, 1e-2 for 16-bit types)");
  sub->add_flag("--float64", opt->float64, "One model: compute every floating tensor in double (docs/semantics.md)");
  sub->add_option("--repeat", opt->repeat,
                  "One model: run it N times on the same inputs, weights decoded once, and time the runs; "
                  "every run must give the first's bits")
      ->check(CLI::Range(1, 1000000));
  sub->add_flag("--json", opt->json, "Print the results as JSON (schema in docs/cli.md)");
  sub->add_flag("--trace", opt->trace, "--compare: compare every value both models compute, report the first divergence");
  sub->add_option("--junit", opt->junit, "Also write the results as JUnit XML to this file");
  sub->add_option("--report", opt->report, "Also write the results as one self-contained HTML page to this file");
  sub->add_option("--inputs", opt->inputs_dir, "--compare: a folder of input sets (test_data_set_*/input_N.pb, or NAME.pb/.npy)");
  return [opt, sub]() {
    json_errors(opt->json);
    if (given(*sub, "--random")) opt->seed = seed_value("--random", opt->seed_text);
    if (given(*sub, "--rtol")) opt->rtol = tolerance_value("--rtol", opt->rtol_text);
    if (given(*sub, "--atol")) opt->atol = tolerance_value("--atol", opt->atol_text);
    plan_report_outputs(*opt);
    std::error_code ec;
    const bool dirs = fs::is_directory(opt->paths[0], ec);
    if (dirs) {
      if (!opt->compare.empty() || !opt->inputs.empty() || opt->seed || !opt->output_dir.empty() || opt->trace ||
          !opt->inputs_dir.empty() || !opt->ranges.empty()) {
        throw Error(ErrorKind::usage, "--compare, --input, --inputs, --random, --input-range, --trace and --output-dir "
                                      "take a model, not folders");
      }
      if (opt->float64) throw Error(ErrorKind::usage, "--float64 runs one model, not test folders");
      if (given(*sub, "--repeat")) throw Error(ErrorKind::usage, "--repeat times one model, not test folders");
      if (given(*sub, "--tolerance") || given(*sub, "--error-stat")) {
        throw Error(ErrorKind::usage, "--tolerance and --error-stat apply to --compare: test folders are judged with "
                                      "ONNX's own tolerances (--rtol, --atol)");
      }
      return run_dirs(*opt);
    }
    if (opt->paths.size() != 1) throw Error(ErrorKind::usage, "give one model, or only test folders");
    if (!opt->filter.empty()) throw Error(ErrorKind::usage, "--filter applies to test folders");
    if (opt->compare.empty() && (opt->trace || !opt->inputs_dir.empty())) {
      throw Error(ErrorKind::usage, "--trace and --inputs apply to --compare B.onnx");
    }
    if (opt->compare.empty() && (!opt->junit.empty() || !opt->report.empty())) {
      throw Error(ErrorKind::usage, "--junit and --report apply to test folders and to --compare B.onnx");
    }
    refuse_without_effect(*sub, "--rtol", !opt->compare.empty(), "on one model: tolerances apply to --compare and to test folders");
    refuse_without_effect(*sub, "--atol", !opt->compare.empty(), "on one model: tolerances apply to --compare and to test folders");
    refuse_without_effect(*sub, "--input-range", opt->seed || !opt->compare.empty(),
                          "without --random: it sets the values --random makes");
    refuse_without_effect(*sub, "--output-dir", opt->compare.empty(), "with --compare: it writes one model's outputs");
    refuse_without_effect(*sub, "--float64", opt->compare.empty(), "with --compare: A runs in float64 by itself (--tolerance auto)");
    refuse_without_effect(*sub, "--repeat", opt->compare.empty(), "with --compare: it times one model's runs");
    refuse_without_effect(*sub, "--tolerance", !opt->compare.empty(), "without --compare: it chooses how two models are compared");
    refuse_without_effect(*sub, "--error-stat", !opt->compare.empty(), "without --compare: it chooses how two models are compared");
    try {
      return opt->compare.empty() ? run_model(*opt) : run_compare(*opt);
    } catch (Error& e) {
      e.in_file(opt->paths[0]);  // errors of B, and of files written, already name theirs
      throw;
    }
  };
}

}  // namespace bnorm::cli
