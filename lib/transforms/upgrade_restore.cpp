#include "transforms/upgrade_restore.h"

#include <fmt/format.h>

#include "core/error.h"
#include "model/model.h"
#include "transforms/upgrade_plan.h"

namespace bnorm::upgrade_detail {

namespace {

using steps::NormSite;

// Every value consumed by a node or returned by a graph, and every name in use.
void collect_names(const onnx::ModelProto& m, steps::Env& env) {
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.input()) env.names.insert(v.name());
    for (const auto& v : g.output()) {
      env.names.insert(v.name());
      env.used.insert(v.name());
    }
    for (const auto& t : g.initializer()) env.names.insert(t.name());
    for (const auto& v : g.value_info()) env.names.insert(v.name());
    for (const auto& n : g.node()) {
      env.names.insert(n.name());
      for (const auto& i : n.input()) env.used.insert(i);
      for (const auto& o : n.output()) env.names.insert(o);
    }
  });
}

std::string training_kept(int target_version) {
  if (target_version >= 14) return "training_mode = 1 with three outputs";
  if (target_version >= 7) return "the five-output training form";
  return "is_test = 0";
}

void run_norm_steps(NormSite& s, const RestoreContext& ctx, UpgradeReport& r) {
  const NormNode n = s.read();
  const int to = norm_schema_version(n.op_name(), ctx.to);
  for (const auto& w : n.warnings) s.report.warnings.push_back(w);
  if (n.kind == NormKind::batch_norm && to < 14) steps::refuse_bfloat16(s, to);
  if (ctx.inference && steps::make_inference(s)) {
    r.made_inference.push_back(s.node.name());
  } else if (n.training && n.version != to) {
    s.report.warnings.push_back(fmt::format(
        "{}: training, kept as training ({}); pass --inference (or set the mode in the input) to convert it as an "
        "inference node", n.mode_reason, training_kept(to)));
  }
  const bool up = to > n.version;
  for (const SchemaChange* row : steps_between(n.kind, n.version, to)) {
    s.report.steps.push_back(up ? fmt::format("{}->{}", row->from, row->to) : fmt::format("{}->{}", row->to, row->from));
    (up ? row->up : row->down)(s);
    s.version = up ? row->to : row->from;
  }
}

void run_softmax_step(NormSite& s, const RestoreContext& ctx, UpgradeReport& r) {
  const bool up = ctx.to > ctx.from;
  (up ? steps::softmax_12_13_up : steps::softmax_12_13_down)(s);
  s.version = up ? 13 : 12;
  r.rewrites.push_back({s.report.graph, s.node.name(), s.node.op_type(),
                        fmt::format("{}: {}", up ? "12->13" : "13->12", s.report.set.empty() ? "" : s.report.set[0]),
                        s.report.added});
}

NormSite make_site(const Hidden& h, const onnx::NodeProto& placeholder, const std::string& graph, steps::Env& env,
                   const RestoreContext& ctx) {
  NormSite s;
  s.node = h.original;
  *s.node.mutable_input() = placeholder.input();
  *s.node.mutable_output() = placeholder.output();
  s.version = is_norm_node(s.node) ? norm_schema_version(s.node.op_type(), ctx.from) : static_cast<int>(ctx.from);
  s.target_opset = ctx.to;
  s.scope = &ctx.index->scope_of(h.inferred);
  s.env = &env;
  s.report.graph = graph;
  s.report.name = s.node.name();
  s.report.op = s.node.op_type();
  s.report.from = s.version;
  s.report.to = is_norm_node(s.node) ? norm_schema_version(s.node.op_type(), ctx.to) : static_cast<int>(ctx.to);
  return s;
}

// Converts one hidden node; appends what replaces it to `nodes` and `g`'s initializers.
void restore_one(const Hidden& h, onnx::NodeProto& placeholder, onnx::GraphProto& g, const std::string& path,
                 google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, steps::Env& env,
                 const RestoreContext& ctx, UpgradeReport& r) {
  if (h.kind == HiddenKind::foreign) {
    onnx::NodeProto n = h.original;
    *n.mutable_input() = placeholder.input();
    *n.mutable_output() = placeholder.output();
    *nodes.Add() = std::move(n);
    return;
  }
  NormSite s = make_site(h, placeholder, path, env, ctx);
  try {
    if (h.kind == HiddenKind::norm) run_norm_steps(s, ctx, r);
    else run_softmax_step(s, ctx, r);
  } catch (Error& e) {
    if (e.node().empty()) e.at_node(s.node.name(), s.node.op_type(), s.version);
    e.context(fmt::format("while converting to opset {}", ctx.to));
    throw;
  }
  for (auto& b : s.before) *nodes.Add() = std::move(b);
  *nodes.Add() = std::move(s.node);
  for (auto& a : s.after) *nodes.Add() = std::move(a);
  for (auto& t : s.initializers) *g.add_initializer() = std::move(t);
  if (h.kind != HiddenKind::norm) return;
  for (const auto& w : s.report.warnings) r.warnings.push_back(fmt::format("node '{}': {}", s.report.name, w));
  r.nodes.push_back(std::move(s.report));
}

}  // namespace

void restore_nodes(onnx::ModelProto& work, const RestoreContext& ctx, UpgradeReport& report) {
  steps::Env env;
  env.index = ctx.index;
  collect_names(work, env);
  for_each_graph_mut(*work.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (auto& n : *g.mutable_node()) {
      if (const Hidden* h = placeholder_of(n, *ctx.hidden)) restore_one(*h, n, g, path, nodes, env, ctx, report);
      else *nodes.Add() = std::move(n);
    }
    g.mutable_node()->Swap(&nodes);
  });
}

}  // namespace bnorm::upgrade_detail
