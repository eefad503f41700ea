#include "model/graph_index.h"

#include "core/error.h"
#include "model/tensor_proto.h"

#include <cstring>
#include "model/model_walk.h"

namespace bnorm {

GraphIndex::GraphIndex(const onnx::ModelProto& model) {
  add_graph(model.graph(), nullptr, nullptr, "main");
  // Uses are recorded after every scope exists, so a use inside a subgraph
  // finds a value defined later in the parent's node list too.
  for (const auto& s : scopes_) record_uses(*s);
}

void GraphIndex::add_graph(const onnx::GraphProto& g, const Scope* parent, const onnx::NodeProto* owner,
                           std::string path) {
  auto scope = std::make_unique<Scope>();
  Scope& s = *scope;
  s.graph = &g;
  s.parent = parent;
  s.owner = owner;
  s.path = std::move(path);
  scopes_.push_back(std::move(scope));

  auto value = [&](const std::string& name) -> Value& {
    Value& v = s.values[name];
    v.name = name;
    v.scope = &s;
    return v;
  };
  for (const auto& in : g.input()) value(in.name()).graph_input = &in;
  for (const auto& init : g.initializer()) value(init.name()).initializer = &init;
  for (const auto& vi : g.value_info()) s.value_info[vi.name()] = &vi;
  for (const auto& node : g.node()) {
    node_scope_[&node] = &s;
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      Value& v = value(node.output(i));
      v.producer = &node;
      v.output = i;
    }
  }
  for (const auto& out : g.output()) {
    auto it = s.values.find(out.name());
    if (it != s.values.end()) it->second.graph_output = true;
  }
  for (const auto& node : g.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) add_graph(attr.g(), &s, &node, subgraph_path(s.path, node, attr.name()));
      for (int i = 0; i < attr.graphs_size(); ++i) {
        add_graph(attr.graphs(i), &s, &node, subgraph_path(s.path, node, attr.name(), i));
      }
    }
  }
}

void GraphIndex::record_uses(const Scope& scope) {
  for (const auto& node : scope.graph->node()) {
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      if (const Value* v = find(scope, node.input(i))) const_cast<Value*>(v)->uses.push_back({&node, i, &scope});
    }
  }
  // A graph output of a subgraph that names an outer value is a use too.
  if (scope.parent) {
    for (const auto& out : scope.graph->output()) {
      if (scope.values.count(out.name())) continue;
      if (const Value* v = find(scope, out.name())) const_cast<Value*>(v)->uses.push_back({scope.owner, -1, &scope});
    }
  }
}

const GraphIndex::Scope& GraphIndex::scope_of(const onnx::NodeProto* node) const {
  auto it = node_scope_.find(node);
  if (it == node_scope_.end()) throw Error(ErrorKind::input, "node is not part of the indexed model");
  return *it->second;
}

const GraphIndex::Value* GraphIndex::find(const Scope& from, const std::string& name) const {
  for (const Scope* s = &from; s; s = s->parent) {
    auto it = s->values.find(name);
    if (it != s->values.end()) return &it->second;
  }
  return nullptr;
}

std::optional<GraphIndex::Constant> GraphIndex::constant(const Scope& from, const std::string& name) const {
  const Value* v = find(from, name);
  if (!v) return std::nullopt;
  if (v->initializer) {
    return Constant{v->graph_input ? ConstKind::initializer_graph_input : ConstKind::initializer, v->initializer,
                    nullptr};
  }
  if (!v->producer || !(v->producer->domain().empty() || v->producer->domain() == "ai.onnx")) return std::nullopt;
  const onnx::NodeProto& node = *v->producer;
  if (node.op_type() == "Identity" && node.input_size() == 1 && node.input(0) != name) {
    auto inner = constant(scope_of(&node), node.input(0));
    if (!inner) return std::nullopt;
    return Constant{ConstKind::computed, inner->tensor, &node};
  }
  if (node.op_type() == "ConstantOfShape") return constant_of_shape(scope_of(&node), node, name);
  if (node.op_type() != "Constant") return std::nullopt;
  for (const auto& attr : node.attribute()) {
    auto owned = [&](onnx::TensorProto::DataType type) {
      owned_tensors_.push_back(std::make_unique<onnx::TensorProto>());
      onnx::TensorProto* t = owned_tensors_.back().get();
      t->set_name(name);
      t->set_data_type(type);
      return t;
    };
    if (attr.name() == "value" && attr.has_t()) return Constant{ConstKind::constant_node, &attr.t(), &node};
    if (attr.name() == "value_float") {
      auto* t = owned(onnx::TensorProto::FLOAT);
      t->add_float_data(attr.f());
      return Constant{ConstKind::constant_node, t, &node};
    }
    if (attr.name() == "value_floats") {
      auto* t = owned(onnx::TensorProto::FLOAT);
      t->add_dims(attr.floats_size());
      for (float f : attr.floats()) t->add_float_data(f);
      return Constant{ConstKind::constant_node, t, &node};
    }
    if (attr.name() == "value_int") {
      auto* t = owned(onnx::TensorProto::INT64);
      t->add_int64_data(attr.i());
      return Constant{ConstKind::constant_node, t, &node};
    }
    if (attr.name() == "value_ints") {
      auto* t = owned(onnx::TensorProto::INT64);
      t->add_dims(attr.ints_size());
      for (auto i : attr.ints()) t->add_int64_data(i);
      return Constant{ConstKind::constant_node, t, &node};
    }
  }
  return std::nullopt;
}

std::optional<GraphIndex::Constant> GraphIndex::constant_of_shape(const Scope& from, const onnx::NodeProto& node,
                                                                  const std::string& name) const {
  if (node.input_size() != 1) return std::nullopt;
  const auto shape = constant(from, node.input(0));
  if (!shape) return std::nullopt;
  Tensor dims_tensor, fill;
  try {
    dims_tensor = decode_tensor(*shape->tensor);
    fill = Tensor(DType::float32, {1});  // default value: float 0
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) fill = decode_tensor(a.t());
    }
  } catch (const Error&) {
    return std::nullopt;  // external or malformed: not resolvable here
  }
  if (dims_tensor.dtype != DType::int64 || dims_tensor.dims.size() != 1 || fill.numel() != 1) return std::nullopt;
  std::vector<int64_t> dims(dims_tensor.data<int64_t>(), dims_tensor.data<int64_t>() + dims_tensor.numel());
  int64_t n = 0;
  try {
    n = checked_numel(dims, kMaxComputedElements);
  } catch (const Error&) {
    return std::nullopt;
  }
  Tensor out(fill.dtype, dims, name);
  const size_t esize = dtype_size(fill.dtype);
  for (int64_t i = 0; i < n; ++i) std::memcpy(out.bytes.data() + i * esize, fill.bytes.data(), esize);
  owned_tensors_.push_back(std::make_unique<onnx::TensorProto>(to_proto(out)));
  return Constant{ConstKind::computed, owned_tensors_.back().get(), &node};
}

const onnx::TypeProto* GraphIndex::declared_type(const Scope& from, const std::string& name) const {
  for (const Scope* s = &from; s; s = s->parent) {
    auto vi = s->value_info.find(name);
    if (vi != s->value_info.end() && vi->second->has_type()) return &vi->second->type();
    auto it = s->values.find(name);
    if (it == s->values.end()) continue;
    const Value& v = it->second;
    if (v.graph_input && v.graph_input->has_type()) return &v.graph_input->type();
    for (const auto& out : s->graph->output()) {
      if (out.name() == name && out.has_type()) return &out.type();
    }
    if (v.initializer) {
      owned_types_.push_back(std::make_unique<onnx::TypeProto>());
      auto* tt = owned_types_.back()->mutable_tensor_type();
      tt->set_elem_type(v.initializer->data_type());
      auto* shape = tt->mutable_shape();
      for (auto d : v.initializer->dims()) shape->add_dim()->set_dim_value(d);
      return owned_types_.back().get();
    }
    return nullptr;
  }
  return nullptr;
}

std::string GraphIndex::describe(ConstKind k) {
  switch (k) {
    case ConstKind::initializer: return "initializer";
    case ConstKind::initializer_graph_input: return "initializer (also a graph input)";
    case ConstKind::constant_node: return "Constant node";
    case ConstKind::computed: return "computed from constants";
  }
  return "?";
}

}  // namespace bnorm
