#include "transforms/inspect.h"

#include <fmt/format.h>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/run/preview_ops.h"
#include "model/graph_index.h"
#include "model/shape_infer/shape_infer.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/tensor.h"
#include "transforms/fold/bn_match.h"
#include "transforms/upgrade/plan.h"

namespace bnorm {

namespace {

std::string type_name(const onnx::TypeProto* t) {
  if (!t || !t->has_tensor_type() || t->tensor_type().elem_type() == 0) return "?";
  return dtype_name(static_cast<DType>(t->tensor_type().elem_type()));
}

// "Conv 'conv1'", or for a node without a name its label, "Conv -> 'c'".
std::string op_and_name(const onnx::NodeProto& n) {
  return n.name().empty() ? node_label(n) : fmt::format("{} '{}'", n.op_type(), n.name());
}

ParamReport describe_param(const GraphIndex& index, const GraphIndex::Scope& scope, const std::string& role,
                           const onnx::NodeProto& node, int input) {
  ParamReport p;
  p.role = role;
  if (input >= node.input_size() || node.input(input).empty()) {
    p.source = "missing";
    p.type = "?";
    return p;
  }
  p.name = node.input(input);
  const GraphIndex::Value* v = index.find(scope, p.name);
  if (auto c = index.constant(scope, p.name)) {
    p.source = GraphIndex::describe(c->kind);
    p.type = dtype_name(static_cast<DType>(c->tensor->data_type()));
    p.shape.assign(c->tensor->dims().begin(), c->tensor->dims().end());
    p.shape_known = true;
    return p;
  }
  if (!v) p.source = "undefined";
  else if (v->graph_input) p.source = v->scope == &scope ? "graph input" : "outer-scope graph input";
  else if (v->producer) p.source = fmt::format("output of {}", op_and_name(*v->producer));
  else p.source = "undefined";
  const onnx::TypeProto* t = index.declared_type(scope, p.name);
  p.type = type_name(t);
  if (t && t->has_tensor_type() && t->tensor_type().has_shape()) {
    p.shape_known = true;
    for (const auto& d : t->tensor_type().shape().dim()) {
      if (!d.has_dim_value()) {
        p.shape_known = false;
        break;
      }
      p.shape.push_back(d.dim_value());
    }
    if (!p.shape_known) p.shape.clear();
  }
  return p;
}

std::vector<std::pair<std::string, std::string>> attributes_with_defaults(const NormNode& n) {
  std::vector<std::pair<std::string, std::string>> a;
  auto mark = [](bool given) { return given ? "" : " (default)"; };
  a.emplace_back("epsilon", fmt::format("{}{}", n.epsilon, mark(n.epsilon_given)));
  if (n.kind == NormKind::instance_norm) return a;
  a.emplace_back("momentum", fmt::format("{}{}", n.momentum, mark(n.momentum_given)));
  if (n.version < 7) a.emplace_back("is_test", fmt::format("{}{}", n.is_test.value_or(0), mark(n.is_test.has_value())));
  if (n.version < 9) a.emplace_back("spatial", fmt::format("{}{}", n.spatial ? 1 : 0, mark(n.spatial_attr.has_value())));
  if (n.version >= 14) {
    a.emplace_back("training_mode", fmt::format("{}{}", n.training_mode.value_or(0), mark(n.training_mode.has_value())));
  }
  return a;
}

NormReport describe_norm(const GraphIndex& index, const GraphIndex::Scope& scope, const onnx::NodeProto& node,
                         int node_index, int64_t opset) {
  NormReport r;
  r.graph = scope.path;
  r.name = node.name();
  r.label = node_label(node, node_index);
  r.index = node_index;
  r.op = node.op_type();
  const NormNode n = read_norm_node(node, opset);
  // The version table's (InstanceNormalization-22 shows as 22; its
  // attributes read as at 6, which 22 only extends with bfloat16).
  r.version = op_version_at(node.op_type(), opset);
  r.attributes = attributes_with_defaults(n);
  if (n.consumed_inputs) r.legacy.push_back("consumed_inputs");
  if (n.is_test) r.legacy.push_back("is_test");
  if (n.spatial_attr) r.legacy.push_back("spatial");
  r.mode = n.training ? "training" : "inference";
  r.mode_reason = n.mode_reason;
  r.warnings = n.warnings;

  const bool bn = n.kind == NormKind::batch_norm;
  static const char* bn_roles[] = {"scale", "B", "input_mean", "input_var"};
  static const char* in_roles[] = {"scale", "B"};
  const int nparams = bn ? 4 : 2;
  for (int i = 0; i < nparams; ++i) r.params.push_back(describe_param(index, scope, bn ? bn_roles[i] : in_roles[i], node, i + 1));
  const int expected_inputs = bn ? 5 : 3;
  if (node.input_size() != expected_inputs) {
    r.warnings.push_back(fmt::format("{} inputs, expected {}", node.input_size(), expected_inputs));
  }
  r.T = node.input_size() > 0 ? type_name(index.declared_type(scope, node.input(0))) : "?";
  if (bn) {
    r.T1 = r.params[0].type;
    r.T2 = r.params[2].type;
  } else if (r.T == "?") {
    // InstanceNormalization has one type T for X, scale, B and Y: X's type
    // when declared, else its parameters'.
    for (const auto& p : r.params) {
      if (p.type != "?") r.T = p.type;
    }
  }

  const GraphIndex::Value* x = node.input_size() > 0 ? index.find(scope, node.input(0)) : nullptr;
  if (!x) r.x_producer = "undefined";
  else if (x->producer) r.x_producer = op_and_name(*x->producer);
  else if (x->graph_input) r.x_producer = "graph input";
  else if (x->initializer) r.x_producer = "initializer";

  if (bn) {
    const FoldCandidate c = match_fold(index, node, opset);
    r.foldable = c.match.has_value();
    r.fold = c ? fmt::format("into {}", op_and_name(*c.match->producer)) : c.reason;
  } else {
    r.fold = "InstanceNormalization does not fold (statistics depend on the input)";
  }
  r.upgrade = plan_upgrade(n, 15);
  return r;
}

// The rest of the normalization family: what each op's attributes default
// to (from ONNX 1.23's Operators.md), per version where they differ.
struct FamilyAttr {
  const char* name;
  const char* fallback;  // nullptr: required
};

std::vector<FamilyAttr> family_attributes(const std::string& op, int version) {
  if (op == "LayerNormalization" || op == "RMSNormalization") return {{"axis", "-1"}, {"epsilon", "1e-05"}, {"stash_type", "1"}};
  if (op == "GroupNormalization") {
    if (version >= 21) return {{"epsilon", "1e-05"}, {"num_groups", nullptr}, {"stash_type", "1"}};
    return {{"epsilon", "1e-05"}, {"num_groups", nullptr}};
  }
  if (op == "MeanVarianceNormalization") {
    if (version == 1) return {{"across_channels", "0"}, {"normalize_variance", "1"}};
    return {{"axes", "[0, 2, 3]"}};
  }
  if (op == "LpNormalization") return {{"axis", "-1"}, {"p", "2"}};
  if (op == "LRN") return {{"alpha", "0.0001"}, {"beta", "0.75"}, {"bias", "1"}, {"size", nullptr}};
  return {};
}

std::string attribute_text(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return std::to_string(a.i());
    case onnx::AttributeProto::FLOAT: return fmt::format("{}", a.f());
    case onnx::AttributeProto::INTS: return fmt::format("[{}]", fmt::join(a.ints(), ", "));
    case onnx::AttributeProto::STRING: return a.s();
    default: return "?";
  }
}

NormReport describe_family(const GraphIndex& index, const GraphIndex::Scope& scope, const onnx::NodeProto& node,
                           int node_index, int64_t opset) {
  NormReport r;
  r.graph = scope.path;
  r.name = node.name();
  r.label = node_label(node, node_index);
  r.index = node_index;
  r.op = node.op_type();
  r.version = op_version_at(node.op_type(), opset);
  if (!r.version) {
    r.warnings.push_back(fmt::format("{} does not exist at opset {}: {}", r.op, opset, resolve_op(r.op, opset).why_not));
  }
  for (const auto& fa : family_attributes(r.op, r.version)) {
    const onnx::AttributeProto* a = nullptr;
    for (const auto& x : node.attribute()) {
      if (x.name() == fa.name) a = &x;
    }
    if (a) r.attributes.emplace_back(fa.name, attribute_text(*a));
    else if (fa.fallback) r.attributes.emplace_back(fa.name, std::string(fa.fallback) + " (default)");
    else r.warnings.push_back(fmt::format("required attribute '{}' is missing", fa.name));
  }
  r.mode = "inference";
  r.mode_reason = "statistics of each input; no training form";
  r.T = node.input_size() > 0 ? type_name(index.declared_type(scope, node.input(0))) : "?";
  const bool affine = r.op == "LayerNormalization" || r.op == "GroupNormalization" || r.op == "RMSNormalization";
  if (affine) {
    r.params.push_back(describe_param(index, scope, "scale", node, 1));
    if (r.op != "RMSNormalization") r.params.push_back(describe_param(index, scope, "B", node, 2));
  }
  const GraphIndex::Value* x = node.input_size() > 0 ? index.find(scope, node.input(0)) : nullptr;
  if (!x) r.x_producer = "undefined";
  else if (x->producer) r.x_producer = op_and_name(*x->producer);
  else if (x->graph_input) r.x_producer = "graph input";
  else if (x->initializer) r.x_producer = "initializer";
  r.fold = affine ? "only with fold --norms all: its scale and bias into the next Gemm, MatMul or 1x1 Conv"
                  : "does not fold (no trailing affine)";
  return r;
}

bool is_family_norm(const onnx::NodeProto& n) {
  static const char* kOps[] = {"LayerNormalization", "GroupNormalization", "RMSNormalization",
                               "MeanVarianceNormalization", "LpNormalization", "LRN"};
  if (!is_default_domain(n.domain())) return false;
  for (const char* op : kOps) {
    if (n.op_type() == op) return true;
  }
  return false;
}

}  // namespace

namespace {

std::string value_type(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) {
    return t.tensor_type().elem_type() ? dtype_name(static_cast<DType>(t.tensor_type().elem_type())) : "?";
  }
  if (t.has_sequence_type()) return "sequence(" + value_type(t.sequence_type().elem_type()) + ")";
  if (t.has_optional_type()) return "optional(" + value_type(t.optional_type().elem_type()) + ")";
  if (t.has_map_type()) return "map";
  if (t.has_sparse_tensor_type()) return "sparse tensor";
  return "?";
}

ValueReport describe_value(const onnx::ValueInfoProto& v, bool input) {
  ValueReport r;
  r.name = v.name();
  r.type = v.has_type() ? value_type(v.type()) : "?";
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return r;
  r.shape_known = true;
  const auto& shape = v.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    r.dim_sized.push_back(d.has_dim_value());
    if (d.has_dim_value()) {
      r.dims.push_back(std::to_string(d.dim_value()));
      continue;
    }
    const bool named = d.has_dim_param() && !d.dim_param().empty();
    r.dims.push_back(named ? d.dim_param() : "?");
    // The key random_inputs reads a dim's size by (eval/run/random_inputs.h).
    if (input) r.dim_options.push_back(fmt::format("--dim {}=N", named ? d.dim_param() : fmt::format("{}[{}]", v.name(), i)));
  }
  return r;
}

nlohmann::json value_json(const ValueReport& v) {
  nlohmann::json dims = nlohmann::json::array();
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (v.dim_sized[i]) dims.push_back(std::stoll(v.dims[i]));
    else if (v.dims[i] == "?") dims.push_back(nullptr);
    else dims.push_back(v.dims[i]);
  }
  return {{"name", v.name}, {"type", v.type}, {"shape", v.shape_known ? dims : nlohmann::json(nullptr)},
          {"dim_options", v.dim_options}};
}

}  // namespace

InspectReport inspect(const Model& model) {
  InspectReport r;
  r.file = model.path.string();
  const onnx::ModelProto& m = model.proto;
  r.ir_version = m.ir_version();
  r.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  for (const auto& op : m.opset_import()) r.opsets.emplace_back(op.domain(), op.version());
  r.opset_implicit = m.opset_import_size() == 0;
  r.default_opset = default_opset(m);
  r.external_data = model.has_external_data();
  std::set<std::string> initializer_names;
  for (const auto& t : m.graph().initializer()) initializer_names.insert(t.name());
  for (const auto& in : m.graph().input()) {
    if (!initializer_names.count(in.name())) r.inputs.push_back(describe_value(in, true));
  }
  for (const auto& out : m.graph().output()) r.outputs.push_back(describe_value(out, false));

  const onnx::ModelProto inferred = with_all_inferred_shapes(m);
  const GraphIndex index(inferred);
  std::map<std::string, int64_t> eval_missing;
  r.graphs = static_cast<int>(index.scopes().size());
  for (const auto& scope : index.scopes()) {
    r.initializers += scope->graph->initializer_size();
    for (int node_index = 0; node_index < scope->graph->node_size(); ++node_index) {
      const auto& node = scope->graph->node(node_index);
      ++r.nodes;
      const bool onnx_op = is_default_domain(node.domain());
      const std::string key = onnx_op ? node.op_type() : node.domain() + "." + node.op_type();
      ++r.op_counts[key];
      r.op_versions[key] = onnx_op ? op_version_at(node.op_type(), r.default_opset) : 0;
      const bool preview = eval::is_preview_domain(node.domain()) && eval::find_preview_op(node.op_type());
      if (!preview && (!onnx_op || !eval_supports(node.op_type(), r.default_opset))) ++eval_missing[key];
      if (is_family_norm(node)) {
        r.norms.push_back(describe_family(index, *scope, node, node_index, r.default_opset));
        continue;
      }
      if (!is_norm_node(node)) continue;
      try {
        r.norms.push_back(describe_norm(index, *scope, node, node_index, r.default_opset));
      } catch (Error& e) {
        e.at_node(node_label(node, node_index), node.op_type(), norm_schema_version(node.op_type(), r.default_opset));
        throw;
      }
      if (r.norms.back().foldable) ++r.foldable;
    }
  }
  for (const auto& [op, count] : eval_missing) {
    const int v = r.op_versions[op];
    r.eval_blockers.push_back(fmt::format("{} ({} node{})", v ? fmt::format("{}-{}", op, v) : op, count,
                                          count == 1 ? "" : "s"));
  }
  return r;
}

nlohmann::json to_json(const InspectReport& r) {
  using nlohmann::json;
  json opsets = json::array();
  for (const auto& [domain, version] : r.opsets) opsets.push_back({{"domain", domain}, {"version", version}});
  json norms = json::array();
  for (const auto& n : r.norms) {
    json attrs = json::object();
    for (const auto& [k, v] : n.attributes) attrs[k] = v;
    json params = json::array();
    for (const auto& p : n.params) {
      params.push_back({{"role", p.role},
                        {"name", p.name},
                        {"source", p.source},
                        {"type", p.type},
                        {"shape", p.shape_known ? json(p.shape) : json(nullptr)}});
    }
    json types = {{"T", n.T}};
    if (!n.T1.empty()) types["T1"] = n.T1;
    if (!n.T2.empty()) types["T2"] = n.T2;
    norms.push_back({{"graph", n.graph},
                     {"name", n.name},
                     {"label", n.label},
                     {"index", n.index},
                     {"op", n.op},
                     {"version", n.version},
                     {"attributes", attrs},
                     {"legacy_attributes", n.legacy},
                     {"mode", n.mode},
                     {"mode_reason", n.mode_reason},
                     {"types", types},
                     {"params", params},
                     {"x_producer", n.x_producer},
                     {"foldable", n.foldable},
                     {"fold", n.fold},
                     {"upgrade_to_15", n.upgrade},
                     {"warnings", n.warnings}});
  }
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const auto& v : r.inputs) inputs.push_back(value_json(v));
  for (const auto& v : r.outputs) outputs.push_back(value_json(v));
  return {{"file", r.file},
          {"ir_version", r.ir_version},
          {"producer", r.producer},
          {"opset_import", opsets},
          {"opset_implicit", r.opset_implicit},
          {"default_opset", r.default_opset},
          {"graphs", r.graphs},
          {"nodes", r.nodes},
          {"op_counts", r.op_counts},
          {"op_versions", r.op_versions},
          {"eval_blockers", r.eval_blockers},
          {"initializers", r.initializers},
          {"external_data", r.external_data},
          {"inputs", inputs},
          {"outputs", outputs},
          {"norm_nodes", norms},
          {"foldable", r.foldable}};
}

}  // namespace bnorm
