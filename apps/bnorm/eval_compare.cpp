// bnorm eval A --compare B: both models on the same input sets, outputs
// compared; with --trace every shared value (eval/report/trace.h), reported as
// text, JSON, JUnit XML and an HTML page.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.h"
#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/report/html.h"
#include "eval/report/trace.h"
#include "api/outcomes.h"
#include "eval_cli.h"

using nlohmann::json;

namespace bnorm::cli {

namespace {

std::vector<InputSet> input_sets(const EvalCliOptions& o, const Model& a) {
  if (!o.inputs_dir.empty()) {
    if (!o.inputs.empty() || o.seed || !o.dims.empty() || !o.ranges.empty()) {
      throw Error(ErrorKind::usage, "--inputs gives every input: drop --input, --random, --dim and --input-range");
    }
    return read_input_sets(o.inputs_dir, a);
  }
  return {InputSet{o.inputs.empty() ? fmt::format("random seed {}", o.seed.value_or(0)) : "given inputs",
                   gather_inputs(o, a, true)}};
}

std::string ratio_text(double worst) {
  return std::isfinite(worst) ? fmt::format("{:.3g}x", worst) : "inf";
}

void print_trace(const TraceResult& r) {
  report_out() << fmt::format("trace: {} value{} compared in both models over {} input set{}{}\n", r.values.size(),
                           r.values.size() == 1 ? "" : "s", r.data_sets, r.data_sets == 1 ? "" : "s",
                           r.uncompared ? fmt::format(", {} produced by one model only", r.uncompared) : "");
  if (r.first < 0) {
    report_out() << "trace: every shared value is within tolerance\n";
  } else {
    const auto& v = r.values[r.first];
    report_out() << fmt::format("first divergence: '{}' ({}): {}\n", v.name, ratio_text(v.diff.worst) + " the tolerance",
                             diff_text(v.diff.diff));
    report_out() << fmt::format("  produced in A by {}\n  produced in B by {}\n", v.producer_a, v.producer_b);
    report_out() << fmt::format("  path: {}\n", fmt::join(r.path, "  >  "));
  }
  std::vector<const TracedValue*> top;
  for (const auto& v : r.values) top.push_back(&v);
  std::stable_sort(top.begin(), top.end(), [](auto* x, auto* y) { return x->diff.worst > y->diff.worst; });
  top.resize(std::min<size_t>(top.size(), 10));
  report_out() << "top values by error (largest error / allowed error):\n";
  report_out() << fmt::format("  {:<24} {:>9} {:>10} {:>10} {:>10} {:>9}  {}\n", "value", "error", "max abs", "max rel",
                           "max ulp", "outside", "producer in A");
  for (const auto* v : top) {
    report_out() << fmt::format("  {:<24} {:>9} {:>10.3g} {:>10.3g} {:>10.4g} {:>9}  {}\n", v->name,
                             ratio_text(v->diff.worst), v->diff.diff.max_abs, v->diff.diff.max_rel, v->diff.max_ulp,
                             v->diff.diff.mismatches, v->producer_a);
  }
}

}  // namespace

int run_compare(const EvalCliOptions& o) {
  const Model a = load_model(o.paths[0]);
  const Model b = load_model(o.compare);
  const std::vector<InputSet> sets = input_sets(o, a);
  TraceResult r;
  if (o.trace) {
    TraceOptions topt;
    topt.rtol = o.rtol;
    topt.atol = o.atol;
    Tracer tracer(a, b, topt);
    for (const auto& set : sets) tracer.run(set.inputs);
    r = tracer.result();
  } else {
    std::vector<std::map<std::string, Tensor>> inputs;
    for (const auto& set : sets) inputs.push_back(set.inputs);
    r = api::compare_outputs(a, b, inputs, o.rtol, o.atol, o.paths[0], o.compare);
  }
  bool all = true;
  for (const auto& v : r.values) {
    if (!v.output) continue;
    all = all && v.diff.diff.pass;
    if (!o.json) report_out() << fmt::format("{} {}: {}\n", v.diff.diff.pass ? "ok  " : "FAIL", v.name, diff_text(v.diff.diff));
  }
  if (o.trace) {
    for (const auto& out : a.proto.graph().output()) {
      const bool found = std::any_of(r.values.begin(), r.values.end(), [&](auto& v) { return v.name == out.name(); });
      if (!found) throw Error(ErrorKind::input, fmt::format("output '{}' has no counterpart in '{}'", out.name(), o.compare));
    }
  }
  if (!o.junit.empty()) write_report_file(o.junit_target, compare_junit(o, r));
  if (!o.report.empty()) {
    const std::string from = o.inputs_dir.empty() ? sets[0].name : "the sets in " + o.inputs_dir;
    write_report_file(o.report_target, compare_report_html({o.paths[0], o.compare, from, o.trace, r}));
  }
  if (o.json) {
    const std::optional<uint64_t> seed =
        o.inputs_dir.empty() ? std::optional<uint64_t>(o.seed.value_or(0)) : std::nullopt;
    report_out() << json_text(api::compare_document(r, o.paths[0], o.compare, seed, o.trace)) << "\n";
  } else {
    if (o.trace) print_trace(r);
    report_out() << (all ? "the models agree\n" : "the models differ\n");
  }
  return all ? kExitOk : kExitCheckFailed;
}

}  // namespace bnorm::cli
