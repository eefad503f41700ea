// bnorm eval's work and documents: two models compared (bnorm.eval-compare/2),
// one model run (bnorm.eval-model/1), conformance folders
// (bnorm.eval-folders/1).
#include <fmt/format.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "api/outcomes.h"
#include "core/error.h"
#include "eval/report/compare_models.h"
#include "eval/run/evaluator.h"
#include "eval/run/float64.h"
#include "eval/run/random_inputs.h"
#include "model/model.h"

namespace bnorm::api {

using nlohmann::json;

namespace {

json optional_text(const std::optional<std::string>& s) { return s ? json(*s) : json(); }

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json stats_json(const ErrorStats& s) {
  return {{"median", s.median}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}, {"mean", s.mean}};
}

json value_json(const TracedValue& v) {
  json j = diff_json(v.diff.diff);
  j["name"] = v.name;
  j["criterion"] = criterion_name(v.criterion);
  j["rtol"] = v.tol.rtol;
  j["atol"] = v.tol.atol;
  j["max_ulp"] = v.diff.max_ulp;
  j["worst"] = finite_or_null(v.diff.worst);
  j["explained"] = v.explained;
  if (v.codes) {
    const CodeDiff& c = *v.codes;
    json first = nullptr;
    if (c.first >= 0) {
      first = {{"element", c.first},
               {"code_a", c.code_a},
               {"code_b", c.code_b},
               {"position_a", finite_or_null(c.position_a)},
               {"position_b", finite_or_null(c.position_b)}};
    }
    j["codes"] = {{"elements", c.elements}, {"differ", c.differ},     {"max_steps", c.max_steps},
                  {"straddling", c.straddling}, {"analysed", c.analysed}, {"rounding", c.rounding()},
                  {"first", first}};
  }
  if (v.criterion == Criterion::rounding) {
    const RoundingDiff& r = v.rounding;
    j["rounding"] = {{"error_b", stats_json(r.b)},  {"error_a", stats_json(r.a)},   {"margin", kRoundingMargin},
                     {"floor", r.floor},            {"channel_mean_a", r.channel_a}, {"channel_mean_b", r.channel_b},
                     {"worst_at", r.worst_at},       {"outside", r.outside},
                     {"within_a_rounding", r.pass}};
  } else if (v.criterion == Criterion::scaled) {
    const ScaledDiff& s = v.scaled;
    j["scaled"] = {{"error", stats_json(s.error)}, {"stat", s.stat}, {"rel", s.rel}, {"scale", s.scale},
                   {"allowed", s.allowed},         {"outside", s.outside}};
  }
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

}  // namespace

json with_schema(json doc, const std::string& kind) {
  doc["schema"] = kind;
  return doc;
}

json diff_json(const Diff& d) {
  return {{"pass", d.pass}, {"max_abs", d.max_abs}, {"max_rel", d.max_rel}, {"mismatches", d.mismatches},
          {"elements", d.elements}, {"problem", d.problem}};
}

CompareCriterion compare_criterion(const std::string& tolerance, const std::optional<double>& rtol,
                                   const std::optional<double>& atol, const std::string& error_stat) {
  if (!tolerance.empty() && tolerance != "auto" && tolerance != "fixed") {
    throw Error(ErrorKind::usage, fmt::format("--tolerance {}: use auto or fixed", tolerance));
  }
  if (tolerance == "auto" && (rtol || atol)) {
    throw Error(ErrorKind::usage, "--rtol and --atol set the fixed tolerance: drop them or --tolerance auto");
  }
  CompareCriterion c;
  c.fixed = tolerance == "fixed" || rtol || atol;
  c.rtol = rtol;
  c.atol = atol;
  stat_of(ErrorStats{}, error_stat);  // a statistic's name, or Error(usage)
  c.stat = error_stat;
  return c;
}

json judged_values_json(const TraceResult& r) {
  int failed = 0;
  for (const auto& v : r.values) failed += !v.diff.diff.pass;
  json first = nullptr;
  if (r.first >= 0) {
    const auto& v = r.values[r.first];
    first = {{"name", v.name}, {"producer_a", v.producer_a}, {"producer_b", v.producer_b}, {"output", v.output}};
  }
  return {{"tolerance", r.auto_criterion ? "auto" : "fixed"},
          {"reference", !r.auto_criterion ? "a" : r.float64_blocker.empty() ? "a-float64" : "a"},
          {"float64_blocker", r.float64_blocker.empty() ? json(nullptr) : json(r.float64_blocker)},
          {"values", {{"compared", r.values.size()}, {"failed", failed}, {"first_failed", first}}},
          {"replayed", r.replayed}};
}

json compare_document(const TraceResult& r, const std::optional<std::string>& a, const std::optional<std::string>& b,
                      const std::optional<uint64_t>& seed, bool trace) {
  bool all = true;
  json outputs = json::array();
  for (const auto& v : r.values) {
    all = all && v.diff.diff.pass;  // every judged value, outputs and (auto) the others
    if (v.output) outputs.push_back(value_json(v));
  }
  json j = judged_values_json(r);
  j["a"] = optional_text(a);
  j["b"] = optional_text(b);
  j["seed"] = seed ? json(*seed) : json(nullptr);
  j["outputs"] = outputs;
  j["pass"] = all;
  j["data_sets"] = r.data_sets;
  if (trace) j["trace"] = trace_json(r);
  return with_schema(std::move(j), "bnorm.eval-compare/2");
}

Stats stats_of(const Tensor& t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  const auto v = t.to_f64();
  for (double x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  return {lo, hi, v.empty() ? 0 : sum / static_cast<double>(v.size())};
}

namespace {

// This process's CPU time (every thread's), in ms.
double cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// The first output of `a` whose type, shape or bits `b` does not repeat, or "".
std::string differing_output(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.dtype != t.dtype || it->second.dims != t.dims || it->second.bytes != t.bytes) {
      return name;
    }
  }
  return {};
}

// The figures the text and the JSON give of a timing.
struct TimingFigures {
  double first, min, median, cpu_min, cpu_median;
};

TimingFigures figures(const Timing& t) {
  auto least = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  return {t.wall_ms.front(), least(t.wall_ms), median(t.wall_ms), least(t.cpu_ms), median(t.cpu_ms)};
}

json timing_json(const Timing& t) {
  const TimingFigures f = figures(t);
  return {{"runs", t.wall_ms.size()}, {"threads", t.threads},        {"first_ms", f.first},
          {"min_ms", f.min},          {"median_ms", f.median},        {"cpu_min_ms", f.cpu_min},
          {"cpu_median_ms", f.cpu_median}, {"identical", t.differs.empty()}};
}

}  // namespace

ModelRuns run_model(const Model& model, const std::map<std::string, Tensor>& inputs, bool float64, int runs) {
  std::optional<Model> promoted;
  if (float64) {
    const std::string why = float64_blocker(model);
    if (!why.empty()) throw Error(ErrorKind::unsupported, "--float64: the model has no float64 evaluation: " + why);
    promoted = promote_to_float64(model);
  }
  EvalCache cache;
  EvalOptions options;
  if (runs > 1) options.cache = &cache;
  ModelRuns r;
  r.timing.threads = omp_get_max_threads();
  for (int k = 0; k < runs; ++k) {
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_ms();
    auto out = promoted ? evaluate_float64(*promoted, inputs, options) : evaluate(model, inputs, options);
    r.timing.cpu_ms.push_back(cpu_ms() - cpu0);
    r.timing.wall_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count());
    if (k == 0) {
      r.outputs = std::move(out);
      continue;
    }
    const std::string differs = differing_output(r.outputs, out);
    if (!differs.empty() && r.timing.differs.empty()) {
      r.timing.differs = differs;
      r.timing.differing_run = k + 1;
    }
    for (auto& [name, t] : out) cache.pool.give(std::move(t.bytes));  // the next run's storage
  }
  return r;
}

std::string timing_text(const Timing& t) {
  const TimingFigures f = figures(t);
  return fmt::format("timing: {} runs on {} thread{}: first {:.3f} ms, fastest {:.3f} ms, median {:.3f} ms; CPU fastest "
                     "{:.3f} ms, median {:.3f} ms",
                     t.wall_ms.size(), t.threads, t.threads == 1 ? "" : "s", f.first, f.min, f.median, f.cpu_min,
                     f.cpu_median);
}

json model_document(const std::string& model, const std::vector<OutputStats>& outputs,
                    const std::optional<Timing>& timing) {
  json outs = json::array();
  for (const auto& o : outputs) {
    const Stats s = stats_of(o.tensor);
    outs.push_back({{"name", o.name}, {"type", dtype_name(o.tensor.dtype)}, {"shape", o.tensor.dims}, {"min", s.min},
                    {"max", s.max}, {"mean", s.mean}, {"files", o.files}});
  }
  return with_schema({{"model", model}, {"outputs", outs}, {"timing", timing ? timing_json(*timing) : json()}},
                     "bnorm.eval-model/1");
}

json folders_document(const std::vector<FolderRow>& rows, const Tolerance& tol) {
  int passed = 0, failed = 0, skipped = 0, errors = 0;
  json tests = json::array();
  for (const auto& row : rows) {
    const BackendTestResult& r = row.result;
    if (!r.error.empty()) ++errors;
    else if (r.skipped) ++skipped;
    else if (r.pass()) ++passed;
    else ++failed;
    json sets = json::array();
    for (const auto& ds : r.data_sets) {
      json outs = json::array();
      for (const auto& out : ds.outputs) {
        json j = diff_json(out.diff);
        j["name"] = out.name;
        outs.push_back(j);
      }
      sets.push_back({{"name", ds.name}, {"outputs", outs}});
    }
    tests.push_back({{"name", r.name}, {"dir", r.dir.string()}, {"skipped", r.skipped}, {"skip_reason", r.skip_reason},
                     {"error", r.error}, {"pass", r.pass()}, {"data_sets", sets}});
  }
  return with_schema({{"tests", tests}, {"passed", passed}, {"failed", failed}, {"skipped", skipped},
                      {"errors", errors}, {"rtol", tol.rtol}, {"atol", tol.atol}},
                     "bnorm.eval-folders/1");
}

std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs) {
  return evaluate(model, inputs);
}

std::map<std::string, Tensor> make_inputs(const Model& model, uint64_t seed, const std::map<std::string, int64_t>& dims,
                                          const std::map<std::string, Tensor>& given,
                                          const std::map<std::string, InputRange>& ranges) {
  return random_inputs(model, seed, dims, given, ranges);
}

Report compare(const Model& a, const Model& b, const CompareRequest& request) {
  const auto inputs = random_inputs(a, request.seed, request.dims, request.inputs, request.ranges);
  const CompareCriterion criterion = compare_criterion(request.tolerance, request.rtol, request.atol, request.error_stat);
  TraceOptions topt;
  topt.criterion = criterion;
  const TraceResult r =
      compare_models(a, b, {inputs}, topt, request.a.value_or("A"), request.b.value_or("B"), request.trace);
  json doc = compare_document(r, request.a, request.b, request.seed, request.trace);
  const bool pass = doc["pass"].get<bool>();
  return Report{std::move(doc), pass ? 0 : 1};
}

}  // namespace bnorm::api
