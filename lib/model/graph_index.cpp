#include "model/graph_index.h"

#include "core/error.h"
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
  if (!v->producer || v->producer->op_type() != "Constant" ||
      !(v->producer->domain().empty() || v->producer->domain() == "ai.onnx")) {
    return std::nullopt;
  }
  const onnx::NodeProto& node = *v->producer;
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
  }
  return "?";
}

}  // namespace bnorm
