// The shape-inference pass: graphs in node order, subgraphs before the node
// that owns them, each node's outputs from its rule (rules.h) merged with
// what the model declares (shape_infer.h states the contract).
#include <fmt/format.h>

#include <set>

#include "core/log.h"
#include "model/infer.h"
#include "model/model.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/shape_infer/rules.h"
#include "model/tensor.h"
#include "model/tensor_proto.h"

namespace bnorm {

using shape_infer::NodeCtx;

bool InferredValue::fully_known() const {
  if (!shape) return false;
  for (const auto& d : *shape)
    if (!d.known()) return false;
  return true;
}

std::string InferredValue::text() const {
  const std::string t = elem ? dtype_name(static_cast<DType>(elem)) : "?";
  if (!shape) return t + "[rank ?]";
  std::vector<std::string> d;
  for (const auto& x : *shape) d.push_back(x.known() ? std::to_string(x.value) : x.param.empty() ? "?" : x.param);
  return fmt::format("{}[{}]", t, fmt::join(d, ","));
}

InferredValue from_type(const onnx::TypeProto& t) {
  InferredValue v;
  if (!t.has_tensor_type()) return v;
  const auto& tt = t.tensor_type();
  v.elem = tt.elem_type();
  if (tt.has_shape()) {
    v.shape.emplace();
    for (const auto& d : tt.shape().dim()) {
      InferredDim x;
      if (d.has_dim_value() && d.dim_value() >= 0) x = InferredDim::of(d.dim_value());
      else if (d.has_dim_param() && !d.dim_param().empty()) x = InferredDim::named(d.dim_param());
      v.shape->push_back(x);
    }
  }
  return v;
}

void to_type(const InferredValue& v, onnx::TypeProto* t) {
  auto* tt = t->mutable_tensor_type();
  tt->set_elem_type(v.elem);
  tt->clear_shape();
  if (!v.shape) return;
  auto* s = tt->mutable_shape();
  for (const auto& d : *v.shape) {
    auto* x = s->add_dim();
    if (d.known()) x->set_dim_value(d.value);
    else if (!d.param.empty()) x->set_dim_param(d.param);
  }
}

namespace {

// A declared value and an inferred one: the declared wins where it says
// something; the inferred fills the rest.
InferredValue merge(const InferredValue& declared, const InferredValue& inferred, const std::string& name) {
  InferredValue m = declared;
  if (!m.elem) m.elem = inferred.elem;
  else if (inferred.elem && inferred.elem != m.elem)
    log().debug("shape inference: '{}' is declared of type {}, inferred {}", name, m.elem, inferred.elem);
  if (!inferred.shape) return m;
  if (!m.shape) {
    m.shape = inferred.shape;
    m.values = inferred.values;
    m.reals = inferred.reals;
    return m;
  }
  if (m.shape->size() != inferred.shape->size()) {
    log().debug("shape inference: '{}' is declared {}, inferred {}: the declared kept", name, declared.text(),
                inferred.text());
    return m;
  }
  bool agree = true;
  for (size_t i = 0; i < m.shape->size(); ++i) {
    InferredDim& d = (*m.shape)[i];
    const InferredDim& e = (*inferred.shape)[i];
    if (d.known()) {
      if (e.known() && e.value != d.value) agree = false;
    } else if (e.known() || d.unknown()) {
      d = e;
    }
  }
  if (agree) {
    m.values = inferred.values;
    m.reals = inferred.reals;
  } else
    log().debug("shape inference: '{}' is declared {}, inferred {}: the declared kept", name, declared.text(),
                inferred.text());
  return m;
}

bool small_index_tensor(int32_t elem, int64_t n) { return shape_infer::is_index_type(elem) && n <= kMaxPropagated; }

InferredValue from_initializer(const onnx::TensorProto& t) {
  InferredValue v;
  v.elem = t.data_type();
  v.shape.emplace();
  for (int64_t d : t.dims()) v.shape->push_back(InferredDim::of(d));
  shape_infer::read_constant(t, v);
  return v;
}

class Pass {
 public:
  Pass(const onnx::ModelProto& m, ModelShapes& out) : opset_(default_opset(m)), out_(out) {}

  struct Env {
    GraphShapes* values;
    const Env* parent;
    const InferredValue* find(const std::string& name) const {
      for (const Env* e = this; e; e = e->parent)
        if (auto it = e->values->find(name); it != e->values->end()) return &it->second;
      return nullptr;
    }
  };

  // `implied`: what the owner node says of the graph's inputs (a Loop's
  // carried values, a Scan's slices), filling what their declarations leave out.
  void graph(const onnx::GraphProto& g, const Env* parent, const std::vector<InferredValue>& implied = {}) {
    GraphShapes& values = out_[&g];
    Env env{&values, parent};
    std::map<std::string, InferredValue> declared;
    for (const auto& t : g.initializer()) values[t.name()] = from_initializer(t);
    for (int k = 0; k < g.input_size(); ++k) {
      const auto& i = g.input(k);
      InferredValue v = from_type(i.type());
      if (auto it = values.find(i.name()); it != values.end()) v = merge(v, it->second, i.name());
      if (static_cast<size_t>(k) < implied.size()) v = merge(v, implied[static_cast<size_t>(k)], i.name());
      values[i.name()] = v;
    }
    for (const auto& v : g.value_info()) declared[v.name()] = from_type(v.type());
    for (const auto& v : g.output()) declared[v.name()] = from_type(v.type());
    for (const auto& n : g.node()) node(n, env, declared);
  }

 private:
  void node(const onnx::NodeProto& n, const Env& env, const std::map<std::string, InferredValue>& declared) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) graph(a.g(), &env, body_inputs(n, a.name(), env));
      for (const auto& sg : a.graphs()) graph(sg, &env);
    }
    NodeCtx c{n, 0, {}, std::vector<InferredValue>(static_cast<size_t>(n.output_size())), {}};
    for (const auto& i : n.input()) c.in.push_back(i.empty() ? nullptr : env.find(i));
    c.subgraph_outputs = [&](const std::string& attr) {
      std::vector<InferredValue> r;
      const onnx::AttributeProto* a = find_attr(n, attr);
      if (!a || !a->has_g()) return r;
      const GraphShapes& gs = out_[&a->g()];
      for (const auto& o : a->g().output()) {
        auto it = gs.find(o.name());
        r.push_back(it != gs.end() ? it->second : from_type(o.type()));
      }
      return r;
    };
    const bool preview = n.domain() == "ai.onnx.preview";
    if (is_default_domain(n.domain()) || preview) {
      c.version = preview ? 1 : op_version_at(n.op_type(), opset_);
      const auto& table = preview ? shape_infer::preview_rules() : shape_infer::rules();
      auto rule = table.find(n.op_type());
      if (c.version > 0 && rule != table.end() && n.output_size() > 0) {  // rules write output 0
        try {
          rule->second(c);
        } catch (const std::exception& e) {
          log().debug("shape inference: node '{}' ({}): {}", n.name(), n.op_type(), e.what());
          c.out.assign(c.out.size(), InferredValue{});
        }
      }
    }
    for (int o = 0; o < n.output_size(); ++o) {
      const std::string& name = n.output(o);
      if (name.empty()) continue;
      InferredValue& v = c.out[static_cast<size_t>(o)];
      if (v.shape)
        for (auto& d : *v.shape)
          if (d.known() && d.value < 0) d = InferredDim{};
      // Values only where they fit the shape: every rule may index them by it.
      const int64_t count = v.shape && v.fully_known() ? known_product_all(*v.shape) : -1;
      if (v.reals && (count < 0 || count > kMaxPropagated || v.reals->size() != static_cast<size_t>(count))) v.reals.reset();
      if (v.values && (!small_index_tensor(v.elem, count) || count < 0 || v.values->size() != static_cast<size_t>(count)))
        v.values.reset();
      if (auto it = declared.find(name); it != declared.end()) v = merge(it->second, v, name);
      (*env.values)[name] = v;
    }
  }

  // A Loop body's inputs: the iteration number, the condition (with the
  // node's value: a body whose condition stays true then runs all M
  // iterations), the carried values; a Scan-9+ body's: the states, then one
  // slice of each scan input (the scan axis removed).
  std::vector<InferredValue> body_inputs(const onnx::NodeProto& n, const std::string& attr, const Env& env) {
    std::vector<InferredValue> r;
    if (attr != "body" || !is_default_domain(n.domain())) return r;
    auto at = [&](int i) {
      InferredValue v;
      if (i < n.input_size() && !n.input(i).empty())
        if (const InferredValue* x = env.find(n.input(i))) v = *x;
      return v;
    };
    if (n.op_type() == "Loop") {
      InferredValue iter;
      iter.elem = onnx::TensorProto::INT64;
      iter.shape.emplace();
      r.push_back(iter);
      InferredValue cond = at(1);
      cond.elem = onnx::TensorProto::BOOL;
      if (n.input_size() < 2 || n.input(1).empty()) cond.values = shape_infer::known_dims({1});
      r.push_back(cond);
      for (int i = 2; i < n.input_size(); ++i) {
        InferredValue v = at(i);
        v.values.reset();
        v.reals.reset();
        r.push_back(v);
      }
    } else if (n.op_type() == "Scan" && op_version_at("Scan", opset_) >= 9) {
      const int64_t scans = attr_int(n, "num_scan_inputs", 0);
      const int states = n.input_size() - static_cast<int>(scans);
      const auto axes = attr_ints(n, "scan_input_axes");
      for (int i = 0; i < n.input_size(); ++i) {
        InferredValue v = at(i);
        v.values.reset();
        v.reals.reset();
        if (i >= states && v.shape) {
          const size_t k = static_cast<size_t>(i - states);
          const int64_t axis = shape_infer::norm_axis(axes && k < axes->size() ? (*axes)[k] : 0, v.rank());
          if (axis < 0) v.shape.reset();
          else v.shape->erase(v.shape->begin() + axis);
        }
        r.push_back(v);
      }
    }
    return r;
  }

  static int64_t known_product_all(const std::vector<InferredDim>& d) {
    return shape_infer::known_product(d, 0, d.size());
  }

  int64_t opset_;
  ModelShapes& out_;
};

bool better(const InferredValue& inferred, const onnx::TypeProto& declared) {
  if (declared.value_case() == onnx::TypeProto::VALUE_NOT_SET) return true;  // an output declared by name alone
  if (!declared.has_tensor_type()) return false;
  const InferredValue d = from_type(declared);
  if (!d.elem && inferred.elem) return true;
  if (!inferred.shape) return false;
  if (!d.shape) return true;
  if (d.shape->size() != inferred.shape->size()) return false;
  for (size_t i = 0; i < d.shape->size(); ++i) {
    const InferredDim &a = (*d.shape)[i], &b = (*inferred.shape)[i];
    if ((!a.known() && b.known()) || (a.unknown() && !b.unknown())) return true;
  }
  return false;
}

void write_graph(onnx::GraphProto& g, const ModelShapes& shapes, WriteOutputs outputs) {
  auto it = shapes.find(&g);
  if (it == shapes.end()) return;
  const GraphShapes& values = it->second;
  std::map<std::string, onnx::ValueInfoProto*> have;
  for (auto& v : *g.mutable_value_info()) have[v.name()] = &v;
  std::set<std::string> output_names;
  for (auto& v : *g.mutable_output()) {
    have[v.name()] = &v;
    output_names.insert(v.name());
  }
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      auto found = values.find(o);
      if (o.empty() || found == values.end()) continue;
      const InferredValue& v = found->second;
      if (!v.elem) continue;  // ONNX reads a tensor type without an element type as an error
      if (outputs == WriteOutputs::no && output_names.count(o)) continue;
      if (auto h = have.find(o); h != have.end()) {
        if (better(v, h->second->type())) to_type(merge(from_type(h->second->type()), v, o), h->second->mutable_type());
        continue;
      }
      auto* vi = g.add_value_info();
      vi->set_name(o);
      to_type(v, vi->mutable_type());
      have[o] = vi;
    }
  }
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) write_graph(*a.mutable_g(), shapes, outputs);
      for (auto& sg : *a.mutable_graphs()) write_graph(sg, shapes, outputs);
    }
  }
}

}  // namespace

ModelShapes infer_model_shapes(const onnx::ModelProto& model) {
  ModelShapes out;
  Pass(model, out).graph(model.graph(), nullptr);
  return out;
}

void write_inferred_shapes(onnx::ModelProto& model, const ModelShapes& shapes, WriteOutputs outputs) {
  write_graph(*model.mutable_graph(), shapes, outputs);
}

onnx::ModelProto with_all_inferred_shapes(const onnx::ModelProto& model, WriteOutputs outputs) {
  onnx::ModelProto copy = with_inferred_shapes(model);
  try {
    const ModelShapes shapes = infer_model_shapes(copy);
    write_inferred_shapes(copy, shapes, outputs);
  } catch (const std::exception& e) {
    log().debug("bnorm's shape inference stopped: {}", e.what());
  }
  return copy;
}

}  // namespace bnorm
