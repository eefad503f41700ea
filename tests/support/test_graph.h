// For the evaluator's tests only: builds small models in memory, and the
// helpers the op tests share: attribute setters, tensors from float64
// values, one node run on constant inputs, and an elementwise comparison.
#pragma once

#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "eval/run/evaluator.h"
#include "model/model.h"
#include "model/tensor.h"
#include "model/tensor_proto.h"

namespace bnorm::test {

class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset) {
    model_.proto.set_ir_version(opset >= 14 ? 8 : 3);
    auto* o = model_.proto.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name = {}) {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph().node_size()) : name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return *n;
  }

  // A graph input with a declared type and shape (no shape when dims is empty and rank < 0).
  void input(const std::string& name, DType t, const std::vector<int64_t>& dims) {
    auto* vi = graph().add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int32_t>(t));
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }

  void output(const std::string& name) { graph().add_output()->set_name(name); }

  void initializer(const std::string& name, Tensor t) {
    t.name = name;
    encode_tensor(t, graph().add_initializer());
  }

  const Model& model() const { return model_; }
  onnx::GraphProto& graph() { return *model_.proto.mutable_graph(); }

 private:
  Model model_;
};

inline void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const char* v) { set_attr(n, name, std::string(v)); }

inline void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t e : v) a->add_ints(e);
}

inline void set_floats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float e : v) a->add_floats(e);
}

inline void set_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void set_strings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& e : v) a->add_strings(e);
}

// Sets a node's attributes; an empty one sets none.
using Attrs = std::function<void(onnx::NodeProto&)>;

// Integer attributes, in order.
inline Attrs int_attrs(std::vector<std::pair<std::string, int64_t>> kv) {
  return [kv](onnx::NodeProto& n) {
    for (const auto& [k, v] : kv) set_attr(n, k, v);
  };
}

// `v` rounded once to type `t`, of shape `dims`.
inline Tensor tensor_of(DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::from_f64(t, std::move(dims), v);
}
inline Tensor f32(std::vector<int64_t> dims, const std::vector<double>& v) {
  return tensor_of(DType::float32, std::move(dims), v);
}
inline Tensor f64(std::vector<int64_t> dims, const std::vector<double>& v) {
  return tensor_of(DType::float64, std::move(dims), v);
}
inline Tensor i64(std::vector<int64_t> dims, const std::vector<double>& v) {
  return tensor_of(DType::int64, std::move(dims), v);
}

// first, first + 1, ... of type `t` and shape `dims`.
inline Tensor iota(DType t, std::vector<int64_t> dims, double first = 0) {
  std::vector<double> v(static_cast<size_t>(checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<double>(i);
  return tensor_of(t, std::move(dims), v);
}

// Uniform values in [lo, hi) (by default [-1, 1)) from std::mt19937(seed),
// rounded to `t`.
inline Tensor random_tensor(DType t, std::vector<int64_t> dims, double lo, double hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(checked_numel(dims)));
  for (double& x : v) x = u(gen);
  return tensor_of(t, std::move(dims), v);
}
inline Tensor random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  return random_tensor(t, std::move(dims), -1.0, 1.0, seed);
}

// Runs one `op` node named "n" at `opset` on constant inputs (initializers
// in0, in1, ...; an undefined tensor skips an optional input) and returns
// the named outputs in order (an empty name skips an output).
inline std::vector<Tensor> run_node(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs,
                                    const std::vector<std::string>& outputs, const Attrs& attrs = {}) {
  GraphBuilder b(opset);
  std::vector<std::string> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(inputs[i].dtype == DType::undefined ? "" : "in" + std::to_string(i));
    if (!in.back().empty()) b.initializer(in.back(), inputs[i]);
  }
  auto& n = b.node(op, in, outputs, "n");
  if (attrs) attrs(n);
  for (const auto& o : outputs) {
    if (!o.empty()) b.output(o);
  }
  const auto r = evaluate(b.model(), {});
  std::vector<Tensor> got;
  for (const auto& o : outputs) {
    if (!o.empty()) got.push_back(r.at(o));
  }
  return got;
}

// The same with `outputs` outputs named out0, out1, ...
inline std::vector<Tensor> run_node(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs,
                                    int outputs, const Attrs& attrs = {}) {
  std::vector<std::string> out;
  for (int i = 0; i < outputs; ++i) out.push_back("out" + std::to_string(i));
  return run_node(opset, op, inputs, out, attrs);
}

// Its first output.
inline Tensor run_node1(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs,
                        const Attrs& attrs = {}) {
  return run_node(opset, op, inputs, 1, attrs)[0];
}

// Each element of `got` within `margin` of `want`, or within Catch's
// relative `epsilon` (its default unless given).
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double margin = 1e-12,
                        double epsilon = -1) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    auto want_i = Approx(want[i]).margin(margin);
    if (epsilon >= 0) want_i.epsilon(epsilon);
    CHECK(got[i] == want_i);
  }
}

}  // namespace bnorm::test
