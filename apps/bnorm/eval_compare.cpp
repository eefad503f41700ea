// bnorm eval A --compare B: both models on the same input sets, outputs
// compared; with --trace every shared value (eval/report/trace.h), reported as
// text, JSON, JUnit XML and an HTML page.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.h"
#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/report/compare_models.h"
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

std::string g3(double x) { return fmt::format("{:.3g}", x); }

// A value outside the criterion that agrees when B runs with A's codes.
std::string verdict_without_flips(const TracedValue& v) {
  TracedValue plain = v;
  plain.explained = false;
  plain.diff.diff.pass = false;
  return verdict_text(plain) + "; follows from the code flips: with A's codes in B it is inside";
}

// What the outputs were judged by.
std::string criterion_text(const TraceResult& r, const CompareCriterion& c) {
  if (!r.auto_criterion) return "";
  if (r.float64_blocker.empty()) return "judged against A's own rounding (A run in float64)\n";
  return fmt::format("judged relative to each output's magnitude ({} |B - A| <= tolerance x max |A|): A has no float64 "
                     "evaluation: {}\n", c.stat, r.float64_blocker);
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
                             verdict_text(v));
    report_out() << fmt::format("  produced in A by {}\n  produced in B by {}\n", v.producer_a, v.producer_b);
    report_out() << fmt::format("  path: {}\n", fmt::join(r.path, "  >  "));
  }
  for (const auto& v : r.values) {
    if (!v.codes || !v.codes->differ) continue;
    report_out() << fmt::format("codes: '{}' (produced in A by {}): {}\n", v.name, v.producer_a, verdict_text(v));
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

// One value's verdict under its criterion.
std::string verdict_text(const TracedValue& v) {
  const Diff& d = v.diff.diff;
  if (!d.problem.empty()) return d.problem;
  if (v.codes && v.codes->differ) return code_text(*v.codes) + (v.explained ? ": rounding" : "");
  if (v.explained) return verdict_without_flips(v);
  if (d.pass && d.max_abs == 0 && d.mismatches == 0 && v.criterion != Criterion::fixed) return "equal to A, bit for bit";
  if (v.criterion == Criterion::rounding) {
    const RoundingDiff& r = v.rounding;
    std::string text = fmt::format("error max {}, p99 {} (A's own: max {}, p99 {}): ", g3(r.b.max), g3(r.b.p99),
                                   g3(r.a.max), g3(r.a.p99));
    if (r.pass) return text + "within A's own rounding";
    if (r.worst_at == "elements") {
      return text + fmt::format("{} of {} elements equal neither A nor A in float64", r.outside, r.elements);
    }
    if (r.worst_at == "non-finite") {
      return text + fmt::format("{} of {} elements NaN or infinite where A is not", r.outside, r.elements);
    }
    return text + fmt::format("{} A's own rounding at {}; {} of {} elements beyond {}x its max", ratio_text(r.worst),
                              r.worst_at, r.outside, r.elements, kRoundingMargin);
  }
  if (v.criterion == Criterion::scaled) {
    const ScaledDiff& s = v.scaled;
    const double got = stat_of(s.error, s.stat);
    std::string text = fmt::format("{} |B - A| {} = {} x max |A| (allowed {})", s.stat, g3(got),
                                   s.scale > 0 ? g3(got / s.scale) : "inf", g3(s.rel));
    if (s.outside) text += fmt::format(", {} of {} elements differ where they must match", s.outside, s.elements);
    return text;
  }
  return diff_text(d);
}

std::string verify_model_text(const TraceResult& r, const std::string& a) {
  const auto failed = std::count_if(r.values.begin(), r.values.end(), [](auto& v) { return !v.diff.diff.pass; });
  const std::string how = r.float64_blocker.empty()
                              ? fmt::format("within {}'s own rounding (it ran in float64)", a)
                              : fmt::format("within each value's magnitude ({} has no float64 evaluation: {})", a,
                                            r.float64_blocker);
  const std::string values = r.values.size() == 1 ? "the 1 value" : fmt::format("the {} values", r.values.size());
  if (!failed) return fmt::format("  verified   {} both models compute: {}\n", values, how);
  const auto& v = *std::find_if(r.values.begin(), r.values.end(), [](auto& v) { return !v.diff.diff.pass; });
  return fmt::format("  FAILED     {} of {} both models compute; the first, '{}' (produced in {} by {}): {}\n", failed,
                     values, v.name, a, v.producer_a, verdict_text(v));
}

int run_compare(const EvalCliOptions& o) {
  const Model a = load_model(o.paths[0]);
  const Model b = load_model(o.compare);
  const std::vector<InputSet> sets = input_sets(o, a);
  const CompareCriterion criterion = api::compare_criterion(o.tolerance, o.rtol, o.atol, o.error_stat);
  std::vector<std::map<std::string, Tensor>> inputs;
  for (const auto& set : sets) inputs.push_back(set.inputs);
  TraceOptions topt;
  topt.criterion = criterion;
  const TraceResult r = compare_models(a, b, inputs, topt, o.paths[0], o.compare, o.trace);
  if (!o.json) report_out() << criterion_text(r, criterion);
  if (!o.json && r.replayed) {
    report_out() << "quantized codes flipped by rounding: B ran again with A's codes in place of its flipped ones\n";
  }
  bool all = true;
  for (const auto& v : r.values) {
    if (!v.output) continue;
    all = all && v.diff.diff.pass;
    if (!o.json) report_out() << fmt::format("{} {}: {}\n", v.diff.diff.pass ? "ok  " : "FAIL", v.name, verdict_text(v));
  }
  // With the auto criterion every shared value was judged too.
  const auto inner_failed = std::count_if(r.values.begin(), r.values.end(), [](auto& v) { return !v.output && !v.diff.diff.pass; });
  all = all && inner_failed == 0;
  if (inner_failed && !o.json && !o.trace) {
    const auto& v = *std::find_if(r.values.begin(), r.values.end(), [](auto& v) { return !v.output && !v.diff.diff.pass; });
    const auto inner = std::count_if(r.values.begin(), r.values.end(), [](auto& v) { return !v.output; });
    report_out() << fmt::format("FAIL {} of {} values inside both models; the first, '{}' (produced in A by {}): {}\n",
                                inner_failed, inner, v.name, v.producer_a, verdict_text(v));
    report_out() << "     (--trace lists every value)\n";
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
