#include "model/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "model/graph_index.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/tensor.h"
#include "model/tensor_proto.h"
#include "model/node_label.h"

namespace bnorm {

namespace {

[[noreturn]] void fail_at(const onnx::NodeProto& node, int version, const std::string& message) {
  Error e(ErrorKind::input, message);
  e.at_node(node_label(node), node.op_type(), version);
  throw e;
}

// The schema version of a node in force at `opset`, for its label in errors
// ("Conv-11"); 0 for other domains and ops no version covers.
int node_version(const onnx::NodeProto& node, int64_t opset) {
  if (is_norm_node(node)) return norm_schema_version(node.op_type(), std::max<int64_t>(opset, 1));
  return is_default_domain(node.domain()) ? op_version_at(node.op_type(), std::max<int64_t>(opset, 1)) : 0;
}

void check_declared_dims(const onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
  const auto& shape = v.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    // -1 is how some exporters write an unknown dim; ONNX's checker accepts
    // it and so does bnorm (load_model clears it to an unknown dim).
    if (shape.dim(i).has_dim_value() && shape.dim(i).dim_value() < -1) {
      fail(ErrorKind::input, "value '{}' is declared with dim {} = {}, which is negative", v.name(), i,
           shape.dim(i).dim_value());
    }
  }
}

// A sparse initializer of `scope` or an enclosing graph (GraphIndex knows
// the dense values only).
bool sparse_initializer(const GraphIndex::Scope& scope, const std::string& name) {
  for (const GraphIndex::Scope* s = &scope; s; s = s->parent) {
    for (const auto& sp : s->graph->sparse_initializer()) {
      if (sp.values().name() == name) return true;
    }
  }
  return false;
}

// Inputs name values, nodes form no cycle (Kahn's algorithm over the
// graph's own nodes; values from enclosing graphs exist before it runs).
void check_graph(const GraphIndex& index, const GraphIndex::Scope& scope, int64_t opset) {
  const auto& g = *scope.graph;
  for (const auto& v : g.input()) check_declared_dims(v);
  for (const auto& v : g.output()) check_declared_dims(v);
  for (const auto& v : g.value_info()) check_declared_dims(v);
  // Single assignment, as ONNX's checker requires: a node output may not
  // reuse a graph input, an initializer or another output of this graph
  // (an index keyed by name would see one of the two producers).
  std::unordered_set<std::string> assigned;
  for (const auto& v : g.input()) assigned.insert(v.name());
  for (const auto& t : g.initializer()) assigned.insert(t.name());
  for (const auto& t : g.sparse_initializer()) assigned.insert(t.values().name());
  for (const auto& n : g.node()) {
    for (const auto& name : n.output()) {
      if (!name.empty() && !assigned.insert(name).second) {
        fail_at(n, node_version(n, opset),
                fmt::format("output '{}' is already a value of its graph (a graph input, an initializer or "
                            "another node's output); ONNX graphs assign each name once",
                            name));
      }
    }
  }
  const int count = g.node_size();
  std::unordered_map<const onnx::NodeProto*, int> position;
  for (int i = 0; i < count; ++i) position[&g.node(i)] = i;
  std::vector<std::vector<int>> next(count);
  std::vector<int> indegree(count, 0);
  for (int i = 0; i < count; ++i) {
    const auto& n = g.node(i);
    for (const auto& name : n.input()) {
      if (name.empty()) continue;
      const GraphIndex::Value* v = index.find(scope, name);
      if ((!v || (!v->producer && !v->initializer && !v->graph_input)) && !sparse_initializer(scope, name)) {
        fail_at(n, node_version(n, opset), fmt::format("input '{}' names no value of the graph", name));
      }
      if (v && v->producer && v->scope == &scope) {
        next[position.at(v->producer)].push_back(i);
        ++indegree[i];
      }
    }
  }
  std::queue<int> ready;
  for (int i = 0; i < count; ++i)
    if (indegree[i] == 0) ready.push(i);
  int done = 0;
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop();
    ++done;
    for (int j : next[i])
      if (--indegree[j] == 0) ready.push(j);
  }
  if (done == count) return;
  for (int i = 0; i < count; ++i) {
    if (indegree[i] > 0) fail_at(g.node(i), node_version(g.node(i), opset), "the graph has a cycle through this node");
  }
}

struct ParamInfo {
  std::optional<int32_t> elem_type;
  std::optional<std::vector<int64_t>> dims;
};

// The type and shape of a value as far as the model states them, without
// reading data: an initializer, a Constant node's tensor, or a declaration.
ParamInfo param_info(const GraphIndex& index, const GraphIndex::Scope& scope, const std::string& name) {
  ParamInfo info;
  const GraphIndex::Value* v = index.find(scope, name);
  if (v && v->initializer) {
    info.elem_type = v->initializer->data_type();
    info.dims = std::vector<int64_t>(v->initializer->dims().begin(), v->initializer->dims().end());
    return info;
  }
  if (v && v->producer && v->producer->op_type() == "Constant" && is_default_domain(v->producer->domain())) {
    for (const auto& a : v->producer->attribute()) {
      if (a.name() == "value" && a.has_t()) {
        info.elem_type = a.t().data_type();
        info.dims = std::vector<int64_t>(a.t().dims().begin(), a.t().dims().end());
        return info;
      }
    }
  }
  const onnx::TypeProto* t = index.declared_type(scope, name);
  if (!t || !t->has_tensor_type()) return info;
  if (t->tensor_type().elem_type() != 0) info.elem_type = t->tensor_type().elem_type();
  if (!t->tensor_type().has_shape()) return info;
  std::vector<int64_t> dims;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return info;
    dims.push_back(d.dim_value());
  }
  info.dims = dims;
  return info;
}

// The rank of a value as far as the model states it; -1 when unknown.
int stated_rank(const GraphIndex& index, const GraphIndex::Scope& scope, const std::string& name) {
  if (const auto info = param_info(index, scope, name); info.dims) return static_cast<int>(info.dims->size());
  const onnx::TypeProto* t = index.declared_type(scope, name);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

// Conv, ConvTranspose and the pools: strides and dilations of at least 1,
// W of X's rank (at least 3). ONNX 1.12's shape inference crashes on these
// (model/onnx_guards.h); here they are refused once, naming the node.
void check_conv_pool_node(const GraphIndex& index, const GraphIndex::Scope& scope, const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() != "strides" && a.name() != "dilations") continue;
    for (const int64_t v : a.ints()) {
      if (v < 1) fail_at(node, 0, fmt::format("attribute '{}' has a value {}; each must be at least 1", a.name(), v));
    }
  }
  const bool weighted = node.op_type() == "Conv" || node.op_type() == "ConvTranspose";
  if (!weighted || node.input_size() < 2) return;
  const int rx = stated_rank(index, scope, node.input(0)), rw = stated_rank(index, scope, node.input(1));
  if ((rw >= 0 && rw < 3) || (rx >= 0 && rw >= 0 && rx != rw)) {
    fail_at(node, 0, fmt::format("input 'W' has rank {}{}; W must have the rank of X, at least 3", rw,
                                 rx >= 0 ? fmt::format(" and input 'X' rank {}", rx) : std::string()));
  }
}

bool is_conv_pool_node(const onnx::NodeProto& node) {
  static const std::set<std::string> ops{"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"};
  return is_default_domain(node.domain()) && ops.count(node.op_type()) > 0;
}

void check_norm_node(const GraphIndex& index, const GraphIndex::Scope& scope, const onnx::NodeProto& node,
                     int64_t opset) {
  const NormNode n = read_norm_node(node, opset);
  const bool bn = n.kind == NormKind::batch_norm;
  static const char* const kBn[] = {"X", "scale", "B", "input_mean", "input_var"};
  static const char* const kIn[] = {"input", "scale", "B"};
  const char* const* roles = bn ? kBn : kIn;
  const int expected = bn ? 5 : 3;
  if (node.input_size() != expected) {
    fail_at(node, n.version, fmt::format("{} inputs, expected {}", node.input_size(), expected));
  }
  for (int i = 0; i < expected; ++i) {
    if (node.input(i).empty()) fail_at(node, n.version, fmt::format("input '{}' is empty; it is required", roles[i]));
  }
  std::optional<int64_t> channels;
  const ParamInfo x = param_info(index, scope, node.input(0));
  if (x.elem_type && !is_floating(static_cast<DType>(*x.elem_type))) {
    fail_at(node, n.version, fmt::format("input '{}' has type {}, expected a floating type", roles[0],
                                         dtype_name(static_cast<DType>(*x.elem_type))));
  }
  const onnx::TypeProto* xt = index.declared_type(scope, node.input(0));
  if (xt && xt->has_tensor_type() && xt->tensor_type().has_shape() && xt->tensor_type().shape().dim_size() >= 2 &&
      xt->tensor_type().shape().dim(1).has_dim_value() && n.spatial) {
    channels = xt->tensor_type().shape().dim(1).dim_value();
  }
  std::optional<int64_t> count;
  int count_from = 0;
  for (int i = 1; i < expected; ++i) {
    const ParamInfo p = param_info(index, scope, node.input(i));
    if (p.elem_type && !is_floating(static_cast<DType>(*p.elem_type))) {
      fail_at(node, n.version, fmt::format("input '{}' has type {}, expected a floating type", roles[i],
                                           dtype_name(static_cast<DType>(*p.elem_type))));
    }
    if (!p.dims) continue;
    int64_t numel = 0;
    try {
      numel = checked_numel(*p.dims);
    } catch (const Error& e) {
      fail_at(node, n.version, fmt::format("input '{}': {}", roles[i], e.bare_message()));
    }
    if (channels && numel != *channels) {
      fail_at(node, n.version, fmt::format("input '{}' has shape {}, expected [{}] (the channels of {})", roles[i],
                                           shape_str(*p.dims), *channels, roles[0]));
    }
    if (count && numel != *count) {
      fail_at(node, n.version, fmt::format("input '{}' has {} elements, input '{}' has {}", roles[i], numel,
                                           roles[count_from], *count));
    }
    count = numel;
    count_from = i;
  }
}

// Tensor attributes (Constant's value, ...), naming the node that holds them.
void check_attribute_tensors(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                             const std::filesystem::path& dir, int64_t opset) {
  for (const auto& node : nodes) {
    try {
      for (const auto& a : node.attribute()) {
        if (a.has_t()) check_tensor_proto(a.t(), dir);
        for (const auto& t : a.tensors()) check_tensor_proto(t, dir);
        if (a.has_sparse_tensor()) check_tensor_proto(a.sparse_tensor().values(), dir);
      }
    } catch (Error& e) {
      e.at_node(node_label(node), node.op_type(), node_version(node, opset));
      throw;
    }
  }
}

}  // namespace

void validate_model(const Model& model) {
  const auto dir = model.dir();
  const int64_t opset = default_opset(model.proto);
  for_each_graph(model.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& t : g.initializer()) check_tensor_proto(t, dir);
    for (const auto& sp : g.sparse_initializer()) check_tensor_proto(sp.values(), dir);
    check_attribute_tensors(g.node(), dir, opset);
  });
  for (const auto& f : model.proto.functions()) check_attribute_tensors(f.node(), dir, opset);
  const GraphIndex index(model.proto);
  for (const auto& scope : index.scopes()) check_graph(index, *scope, opset);
  for (const auto& scope : index.scopes()) {
    for (const auto& node : scope->graph->node()) {
      if (is_norm_node(node)) check_norm_node(index, *scope, node, opset);
      if (is_conv_pool_node(node)) check_conv_pool_node(index, *scope, node);
    }
  }
}

}  // namespace bnorm
