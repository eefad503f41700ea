#include "transforms/upgrade/restore.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include "core/error.h"
#include "model/model.h"
#include "model/node_label.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"
#include "transforms/upgrade/ir_types.h"

namespace bnorm::upgrade_detail {

namespace {

using steps::NormSite;


std::string training_kept(int target_version) {
  if (target_version >= 14) return "training_mode = 1 with three outputs";
  if (target_version >= 7) return "the five-output training form";
  return "is_test = 0";
}

// Attributes the node's schema at the target does not have (old
// exporters wrote e.g. is_test on InstanceNormalization) make the model
// invalid there; they never had a meaning, so they are dropped, with a warning.
void drop_unknown_attributes(NormSite& s, int64_t opset) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(s.node.op_type(), static_cast<int>(opset), "");
  if (!schema) return;
  std::vector<std::string> unknown;
  for (const auto& a : s.node.attribute()) {
    if (!schema->attributes().count(a.name())) unknown.push_back(a.name());
  }
  for (const auto& name : unknown) {
    steps::remove_attr(s.node, name);
    s.report.dropped.push_back(name);
    s.report.warnings.push_back(fmt::format("attribute '{}' is not an attribute of {}-{}; dropped", name,
                                            s.node.op_type(), s.version));
  }
}

void run_norm_steps(NormSite& s, const RestoreContext& ctx, UpgradeReport& r) {
  const NormNode n = s.read();
  const int to = norm_schema_version(n.op_name(), ctx.to);
  for (const auto& w : n.warnings) s.report.warnings.push_back(w);
  if (n.kind == NormKind::batch_norm && to < 14) steps::refuse_bfloat16(s, to);
  if (ctx.inference && steps::make_inference(s)) {
    r.made_inference.push_back(node_label(s.node));
  } else if (n.training && n.version != to) {
    s.report.warnings.push_back(fmt::format(
        "{}: training, kept as training ({}); pass --inference (or set the mode in the input) to convert it as an "
        "inference node", n.mode_reason, training_kept(to)));
  }
  steps::run_steps(s, ctx.from, ctx.to,
                   [&](const Step&, int before, int after) { s.report.steps.push_back(fmt::format("{}->{}", before, after)); });
  drop_unknown_attributes(s, ctx.to);
  // BN-1 requires consumed_inputs; an input at version 1 without it gets it.
  if (n.kind == NormKind::batch_norm && to == 1 && !find_attr(s.node, "consumed_inputs")) steps::bn_1_6_down(s);
}

// Any other node a step matches: the steps of its rows (steps::run_steps).
void run_op_steps(NormSite& s, const RestoreContext& ctx, UpgradeReport& r) {
  steps::run_steps(s, ctx.from, ctx.to);
  if (s.node.op_type() != s.report.op) s.report.to = s.version;  // another op now (ScatterElements -> Scatter-9)
  std::vector<std::string> what{fmt::format("{}->{}", s.report.from, s.report.to)};
  for (const auto& d : s.report.dropped) what.push_back("dropped " + d);
  for (const auto& x : s.report.set) what.push_back("set " + x);
  r.rewrites.push_back({s.report.graph, s.node.name(), s.node.op_type(), fmt::format("{}", fmt::join(what, "; ")), s.report.added,
                        node_label(s.node)});
  if (s.report.made_inference) r.made_inference.push_back(node_label(s.node));
}

int schema_version_of(const onnx::NodeProto& n, int64_t opset) {
  if (is_norm_node(n)) return norm_schema_version(n.op_type(), opset);
  return steps::schema_version(n.op_type(), opset);
}

NormSite make_site(const Hidden& h, const onnx::NodeProto& placeholder, const std::string& graph, steps::Env& env,
                   const RestoreContext& ctx) {
  NormSite s;
  s.node = h.original;
  *s.node.mutable_input() = placeholder.input();
  *s.node.mutable_output() = placeholder.output();
  s.version = schema_version_of(s.node, ctx.from);
  s.target_opset = ctx.to;
  s.inference = ctx.inference;
  s.scope = &ctx.index->scope_of(h.inferred);
  s.env = &env;
  s.report.graph = graph;
  s.report.name = s.node.name();
  s.report.label = node_label(s.node);
  s.report.op = s.node.op_type();
  s.report.from = s.version;
  s.report.to = schema_version_of(s.node, ctx.to);
  return s;
}

// A node bnorm's own op steps rewrite (Softmax, Dropout, Cast, Pad) has as
// many inputs and outputs as its schema allows: the steps read input 0 and
// output 0. (BN/IN counts are checked at load, validate_model.)
void check_arity(const NormSite& s) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(s.node.op_type(), s.version, onnx::ONNX_DOMAIN);
  if (schema == nullptr) return;
  const int in = s.node.input_size(), out = s.node.output_size();
  if (in < schema->min_input() || in > schema->max_input()) {
    fail(ErrorKind::input, "{} inputs; version {} takes {} to {}", in, schema->since_version(), schema->min_input(),
         schema->max_input());
  }
  if (out < schema->min_output() || out > schema->max_output()) {
    fail(ErrorKind::input, "{} outputs; version {} gives {} to {}", out, schema->since_version(), schema->min_output(),
         schema->max_output());
  }
}

// Converts one hidden node; appends what replaces it to `nodes` and `g`'s initializers.
void restore_one(const Hidden& h, onnx::NodeProto& placeholder, onnx::GraphProto& g, const std::string& path,
                 google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, steps::Env& env,
                 const RestoreContext& ctx, UpgradeReport& r, bool list_as_inputs) {
  if (h.kind == HiddenKind::foreign) {
    onnx::NodeProto n = h.original;
    *n.mutable_input() = placeholder.input();
    *n.mutable_output() = placeholder.output();
    *nodes.Add() = std::move(n);
    return;
  }
  NormSite s = make_site(h, placeholder, path, env, ctx);
  try {
    if (h.kind != HiddenKind::norm) check_arity(s);
    if (h.kind == HiddenKind::norm) run_norm_steps(s, ctx, r);
    else run_op_steps(s, ctx, r);
  } catch (Error& e) {
    if (e.node().empty()) e.at_node(node_label(s.node), s.node.op_type(), s.version);
    e.context(fmt::format("while converting to opset {}", ctx.to));
    throw;
  }
  for (auto& b : s.before) *nodes.Add() = std::move(b);
  *nodes.Add() = std::move(s.node);
  for (auto& a : s.after) *nodes.Add() = std::move(a);
  for (auto& t : s.initializers) {
    if (list_as_inputs) {  // below IR 4 every initializer of the main graph is a graph input too
      add_tensor_input(g, t.name(), t.data_type(), t.dims());
    }
    *g.add_initializer() = std::move(t);
  }
  for (const auto& w : s.report.warnings) r.warnings.push_back(fmt::format("node '{}': {}", s.report.label, w));
  if (h.kind != HiddenKind::norm) return;
  r.nodes.push_back(std::move(s.report));
}

}  // namespace

void restore_nodes(onnx::ModelProto& work, const RestoreContext& ctx, UpgradeReport& report) {
  steps::Env env;
  env.index = ctx.index;
  steps::collect_names(work, env);
  const bool listed = std::max(work.ir_version(), required_ir_version(ctx.to)) < 4;  // the IR it is written at
  for_each_graph_mut(*work.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (auto& n : *g.mutable_node()) {
      const Hidden* h = placeholder_of(n, *ctx.hidden);
      if (h) restore_one(*h, n, g, path, nodes, env, ctx, report, listed && path == "main");
      else *nodes.Add() = std::move(n);
    }
    g.mutable_node()->Swap(&nodes);
  });
}

}  // namespace bnorm::upgrade_detail
