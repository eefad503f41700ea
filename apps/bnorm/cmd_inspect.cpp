// bnorm inspect MODEL [--json] [--summary] [--shapes]
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "core/error.h"
#include "model/model.h"
#include "api/outcomes.h"
#include "cli_inputs.h"
#include "cli_parse.h"
#include "transforms/upgrade/upgrade.h"
#include "transforms/fp16_risk.h"
#include "transforms/inspect.h"
#include "transforms/upgrade/preflight.h"

namespace bnorm::cli {

namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
  bool summary = false;
  std::optional<int64_t> to;
  bool fp16 = false;
  bool shapes = false;
  InputOptions measure;  // --fp16's inputs: --input, --random, --dim
  std::string to_text, seed_text;
};

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string shape_text(const ParamReport& p) {
  if (!p.shape_known) return "[?]";
  std::vector<std::string> d;
  for (auto x : p.shape) d.push_back(std::to_string(x));
  return "[" + join(d, ", ") + "]";
}

// "inputs     x float [batch, 3, 8, 8]  --dim batch=N", one value a line.
void print_values(const char* what, const std::vector<ValueReport>& values) {
  if (values.empty()) report_out() << fmt::format("{:<10} none\n", what);
  bool first = true;
  for (const auto& v : values) {
    const std::string shape = v.shape_known ? "[" + join(v.dims, ", ") + "]" : "(shape not declared)";
    report_out() << fmt::format("{:<10} {} {} {}{}\n", first ? what : "", v.name, v.type, shape,
                                v.dim_options.empty() ? "" : "  " + join(v.dim_options, " "));
    first = false;
  }
}

void print_header(const InspectReport& r) {
  std::vector<std::string> opsets;
  for (const auto& [domain, v] : r.opsets) opsets.push_back(fmt::format("{} {}", domain.empty() ? "ai.onnx" : domain, v));
  if (r.opset_implicit) opsets.push_back("none (opset 1 implied)");
  report_out() << fmt::format("model      {}\n", r.file);
  report_out() << fmt::format("IR         {}   opsets: {}   producer: {}\n", r.ir_version, join(opsets, ", "),
                           r.producer.empty() ? "-" : r.producer);
  std::vector<std::string> counts;
  for (const auto& [op, n] : r.op_counts) {
    const int v = r.op_versions.count(op) ? r.op_versions.at(op) : 0;
    counts.push_back(v ? fmt::format("{}-{} {}", op, v, n) : fmt::format("{} {}", op, n));
  }
  report_out() << fmt::format("nodes      {} in {} graph{}: {}\n", r.nodes, r.graphs, r.graphs == 1 ? "" : "s",
                           join(counts, ", "));
  report_out() << fmt::format("eval       {}\n", r.eval_blockers.empty() ? "bnorm eval runs every node"
                                                                      : "cannot run " + join(r.eval_blockers, ", "));
  report_out() << fmt::format("weights    {} initializers, external data: {}\n", r.initializers,
                           r.external_data ? "yes" : "no");
  print_values("inputs", r.inputs);
  print_values("outputs", r.outputs);
}

void print_table(const InspectReport& r) {
  report_out() << fmt::format("\n{} normalization node{}, {} foldable\n", r.norms.size(), r.norms.size() == 1 ? "" : "s",
                           r.foldable);
  if (r.norms.empty()) return;
  size_t wn = 4, wo = 2, wg = 5, wm = 4;
  for (const auto& n : r.norms) {
    wn = std::max(wn, n.label.size());
    wo = std::max(wo, n.op.size() + 3);
    wg = std::max(wg, n.graph.size());
    wm = std::max(wm, n.mode.size());
  }
  report_out() << fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", "node", wn, "op", wo, "graph", wg, "mode", wm,
                           "fold");
  for (const auto& n : r.norms) {
    report_out() << fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", n.label, wn,
                             fmt::format("{}-{}", n.op, n.version), wo, n.graph, wg, n.mode, wm,
                             n.foldable ? n.fold : "no: " + n.fold);
  }
}

void print_details(const NormReport& n) {
  report_out() << fmt::format("\n{} ({}-{}, graph {})\n", n.label, n.op, n.version, n.graph);
  std::vector<std::string> attrs;
  for (const auto& [k, v] : n.attributes) attrs.push_back(k + "=" + v);
  report_out() << fmt::format("  mode        {} ({})\n", n.mode, n.mode_reason);
  report_out() << fmt::format("  attributes  {}\n", join(attrs, "  "));
  if (!n.legacy.empty()) report_out() << fmt::format("  legacy      {}\n", join(n.legacy, ", "));
  if (n.T1.empty()) report_out() << fmt::format("  types       T={}\n", n.T);
  else report_out() << fmt::format("  types       T={} T1={} T2={}\n", n.T, n.T1, n.T2);
  report_out() << fmt::format("  X           from {}\n", n.x_producer);
  for (const auto& p : n.params) {
    report_out() << fmt::format("  {:<11} {} {} from {}{}\n", p.role, shape_text(p), p.type, p.source,
                             p.name.empty() ? "" : " '" + p.name + "'");
  }
  report_out() << fmt::format("  fold        {}\n", n.foldable ? n.fold : "no: " + n.fold);
  if (n.op == "BatchNormalization" || n.op == "InstanceNormalization") {
    report_out() << fmt::format("  upgrade 15  {}\n", n.upgrade.empty() ? "nothing to change" : join(n.upgrade, "; "));
  }
  for (const auto& w : n.warnings) report_out() << fmt::format("  warning     {}\n", w);
}

// Pre-flight: what `upgrade --to N` would do, blockers first.
void print_plan(const UpgradePlan& p) {
  const std::string ir = p.to_ir > 0 ? fmt::format(" (IR {} -> {})", p.from_ir, p.to_ir) : "";
  report_out() << fmt::format("\nupgrade to opset {}{}: {}\n", p.to_opset, ir,
                           p.blockers.empty() ? "every node converts"
                                              : fmt::format("{} node{} block{} it", p.blockers.size(),
                                                            p.blockers.size() == 1 ? "" : "s",
                                                            p.blockers.size() == 1 ? "s" : ""));
  for (const auto& b : p.blockers) report_out() << fmt::format("  blocks   {}\n", b);
  for (const auto& n : p.nodes) {
    if (!n.blocker.empty()) continue;
    report_out() << fmt::format("  {:<8} {} ({}-{} -> {}){}\n", n.by, n.label, n.op, n.from,
                             n.to == 0 ? "none" : std::to_string(n.to),  // lowered: no version at the target
                             n.changes.empty() ? "" : ": " + join(n.changes, "; "));
  }
}

void print_risks(const std::vector<Fp16Risk>& risks, bool measured) {
  report_out() << fmt::format("\nfloat16 risks{}: {}\n", measured ? " (inputs measured)" : " (parameters only)",
                           risks.empty() ? "none" : std::to_string(risks.size()));
  for (const auto& r : risks) {
    report_out() << fmt::format("  {} ({}) {} {}: {}\n      do: {}\n", r.node, r.op, r.check, r.input, r.what, r.advice);
  }
}

// "value shapes (inferred)" then one value a line, by graph.
void print_shapes(const std::vector<ValueShape>& shapes) {
  report_out() << fmt::format("\nvalue shapes (inferred, {} values)\n", shapes.size());
  size_t w = 4;
  for (const auto& v : shapes) w = std::max(w, v.name.size());
  std::string graph = "main";
  for (const auto& v : shapes) {
    if (v.graph != graph) report_out() << fmt::format("  graph {}\n", graph = v.graph);
    report_out() << fmt::format("  {:<{}}  {}\n", v.name, w, v.text());
  }
}

}  // namespace

Runner add_inspect(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand("inspect", "Show what is in a model and what fold and upgrade would do");
  sub->add_option("model", opt->model, "The .onnx model")->required();
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  sub->add_flag("--summary", opt->summary, "Print the header and the table only, no per-node details");
  sub->add_flag("--fp16", opt->fp16,
                "Float16 risks of the normalization nodes: parameters that overflow or vanish in float16, and with "
                "--random/--input, inputs whose sum of squares overflows it");
  sub->add_flag("--shapes", opt->shapes,
                "The inferred element type and shape of every value (graph inputs and node outputs, subgraphs "
                "included): ONNX's shape inference, then bnorm's where it stops");
  sub->add_option("--input", opt->measure.inputs, "NAME=FILE: an input for --fp16's measurement (repeatable)");
  sub->add_option("--random", opt->seed_text, "--fp16: measure on seeded random inputs");
  sub->add_option("--dim", opt->measure.dims, "NAME=VALUE: a symbolic dim's size for --random (repeatable)");
  sub->add_option("--input-range", opt->measure.ranges,
                  "NAME=LO:HI: --random draws input NAME from [LO, HI] (integers; floats [LO, HI)) (repeatable)");
  sub->add_option("--to", opt->to_text, "Pre-flight: what upgrade --to N would do to every node, and every node that blocks it");
  return [opt, sub]() {
    json_errors(opt->json);
    if (given(*sub, "--to")) opt->to = int_value("--to", opt->to_text, INT64_MIN, INT64_MAX);
    if (given(*sub, "--random")) opt->measure.seed = seed_value("--random", opt->seed_text);
    refuse_without_effect(*sub, "--summary", !opt->json, "with --json: the JSON report is always whole");
    for (const char* o : {"--input", "--random", "--dim", "--input-range"}) {
      refuse_without_effect(*sub, o, opt->fp16,
                            "without --fp16: --input, --random, --dim and --input-range go with --fp16");
    }
    if (!opt->measure.ranges.empty() && !opt->measure.seed) {
      throw Error(ErrorKind::usage, "--input-range has no effect without --random: it sets --random's data");
    }
    const Model model = load_model(opt->model);
    api::InspectRequest request;
    request.to = opt->to;
    request.fp16 = opt->fp16;
    request.shapes = opt->shapes;
    request.inputs = read_inputs(opt->measure.inputs);
    request.seed = opt->measure.seed;
    request.dims = parse_dims(opt->measure.dims);
    request.ranges = parse_ranges(opt->measure.ranges);
    request.file = opt->model;
    api::InspectOutcome o;
    try {
      o = api::inspect_model(model, request);
    } catch (Error& e) {
      e.in_file(opt->model);
      throw;
    }
    if (opt->json) {
      report_out() << json_text(api::inspect_document(o, request)) << "\n";
      return 0;
    }
    const InspectReport& r = o.report;
    print_header(r);
    print_table(r);
    if (!opt->summary) {
      for (const auto& n : r.norms) print_details(n);
    }
    if (o.risks) print_risks(*o.risks, o.measured);
    if (o.plan) print_plan(*o.plan);
    if (o.shapes) print_shapes(*o.shapes);
    return 0;
  };
}

}  // namespace bnorm::cli
