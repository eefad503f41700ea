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
#include "eval_cli.h"

using nlohmann::json;

namespace bnorm::cli {

namespace {

std::vector<InputSet> input_sets(const EvalCliOptions& o, const Model& a) {
  if (!o.inputs_dir.empty()) {
    if (!o.inputs.empty() || o.seed || !o.dims.empty()) {
      throw Error(ErrorKind::usage, "--inputs gives every input: drop --input, --random and --dim");
    }
    return read_input_sets(o.inputs_dir, a);
  }
  return {InputSet{o.inputs.empty() ? fmt::format("random seed {}", o.seed.value_or(0)) : "given inputs",
                   gather_inputs(o, a, true)}};
}

Tolerance tolerance_for(const EvalCliOptions& o, DType t) {
  Tolerance tol = model_compare_tolerance(t);
  if (o.rtol) tol.rtol = *o.rtol;
  if (o.atol) tol.atol = *o.atol;
  return tol;
}

// Without --trace: each set run whole, the graph outputs compared (by name,
// else by position), merged into a TraceResult holding only the outputs.
TraceResult compare_outputs(const EvalCliOptions& o, const Model& a, const Model& b,
                            const std::vector<InputSet>& sets) {
  TraceResult r;
  const auto& outs_a = a.proto.graph().output();
  const auto& outs_b = b.proto.graph().output();
  for (const auto& set : sets) {
    std::map<std::string, Tensor> ya, yb;
    try {
      ya = evaluate(a, set.inputs);
    } catch (Error& e) {
      e.in_file(o.paths[0]).context("in the first model");
      throw;
    }
    try {
      yb = evaluate(b, set.inputs);
    } catch (Error& e) {
      e.in_file(o.compare).context("in the second model, run on the inputs made for the first");
      throw;
    }
    for (int i = 0; i < outs_a.size(); ++i) {
      const std::string& name = outs_a[i].name();
      std::string other = name;
      if (!yb.count(other) && i < outs_b.size()) other = outs_b[i].name();
      if (!ya.count(name) || !yb.count(other)) {
        throw Error(ErrorKind::input, fmt::format("output '{}' has no counterpart in '{}'", name, o.compare));
      }
      const Tolerance tol = tolerance_for(o, ya[name].dtype);
      ValueDiff d = diff_values(ya[name], yb[other], tol);
      if (static_cast<int>(r.values.size()) <= i) {
        TracedValue v;
        v.name = name;
        v.name_b = other;
        v.order = i;
        v.output = true;
        v.dtype = ya[name].dtype;
        v.dims = ya[name].dims;
        v.tol = tol;
        v.diff = std::move(d);
        r.values.push_back(std::move(v));
      } else {
        r.values[i].diff.merge(d);
      }
    }
    ++r.data_sets;
  }
  for (size_t i = 0; i < r.values.size() && r.first < 0; ++i)
    if (!r.values[i].diff.diff.pass) r.first = static_cast<int>(i);
  return r;
}

json value_json(const TracedValue& v) {
  json j = diff_json(v.diff.diff);
  j["name"] = v.name;
  j["rtol"] = v.tol.rtol;
  j["atol"] = v.tol.atol;
  j["max_ulp"] = v.diff.max_ulp;
  j["worst"] = std::isfinite(v.diff.worst) ? json(v.diff.worst) : json(nullptr);
  return j;
}

json trace_json(const TraceResult& r) {
  json values = json::array();
  for (const auto& v : r.values) {
    json j = value_json(v);
    j["name_b"] = v.name_b;
    j["producer_a"] = v.producer_a;
    j["producer_b"] = v.producer_b;
    j["output"] = v.output;
    j["type"] = dtype_name(v.dtype);
    j["shape"] = v.dims;
    j["histogram"] = v.diff.histogram;
    values.push_back(j);
  }
  json first = nullptr;
  if (r.first >= 0) {
    const auto& v = r.values[r.first];
    first = {{"name", v.name}, {"producer_a", v.producer_a}, {"producer_b", v.producer_b}, {"path", r.path}};
  }
  return {{"values", values}, {"first_divergence", first}, {"uncompared", r.uncompared},
          {"peak_kept_bytes", r.peak_kept_bytes}, {"spilled_bytes", r.spilled_bytes}};
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
    r = compare_outputs(o, a, b, sets);
  }
  bool all = true;
  json outputs = json::array();
  for (const auto& v : r.values) {
    if (!v.output) continue;
    all = all && v.diff.diff.pass;
    outputs.push_back(value_json(v));
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
    json j = {{"schema", "bnorm.eval-compare/1"}, {"a", o.paths[0]}, {"b", o.compare}, {"seed", o.inputs_dir.empty() ? json(o.seed.value_or(0)) : json(nullptr)}, {"outputs", outputs},
              {"pass", all}, {"data_sets", r.data_sets}};
    if (o.trace) j["trace"] = trace_json(r);
    report_out() << json_text(j) << "\n";
  } else {
    if (o.trace) print_trace(r);
    report_out() << (all ? "the models agree\n" : "the models differ\n");
  }
  return all ? kExitOk : kExitCheckFailed;
}

}  // namespace bnorm::cli
