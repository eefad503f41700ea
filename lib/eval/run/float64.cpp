#include "eval/run/float64.h"

#include <fmt/format.h>

#include <set>

#include "model/model_walk.h"
#include "model/node_label.h"
#include "model/tensor_proto.h"

namespace bnorm {

namespace {

bool narrow_floating(int32_t t) {
  const auto d = static_cast<DType>(t);
  return is_floating(d) && d != DType::float64;
}

bool outside_float64(int32_t t) {
  const auto d = static_cast<DType>(t);
  return is_float8(d) || d == DType::float8e8m0 || is_4bit(d) || is_2bit(d);
}

// Ops whose results are integer codes rounded from float inputs.
const std::set<std::string>& quantizing_ops() {
  static const std::set<std::string> ops = {
      "QuantizeLinear",  "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger",
      "MatMulInteger",   "QLinearAdd",            "QLinearMul",  "QLinearSigmoid", "QLinearLeakyRelu",
      "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearConcat"};
  return ops;
}

// The first float8 / 4-bit element type in a type proto, or 0.
int32_t blocked_type(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return outside_float64(t.tensor_type().elem_type()) ? t.tensor_type().elem_type() : 0;
  if (t.has_sequence_type()) return blocked_type(t.sequence_type().elem_type());
  if (t.has_optional_type()) return blocked_type(t.optional_type().elem_type());
  return 0;
}

void promote_type(onnx::TypeProto& t) {
  if (t.has_tensor_type()) {
    if (narrow_floating(t.tensor_type().elem_type())) t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  } else if (t.has_sequence_type()) {
    promote_type(*t.mutable_sequence_type()->mutable_elem_type());
  } else if (t.has_optional_type()) {
    promote_type(*t.mutable_optional_type()->mutable_elem_type());
  }
}

void promote_infos(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos) {
  for (auto& vi : infos) promote_type(*vi.mutable_type());
}

// A tensor attribute's value widened to double (the tensor is small: it
// lives in the node).
void promote_tensor(onnx::TensorProto& t, const Model& model) {
  if (!narrow_floating(t.data_type())) return;
  Tensor wide = widened(decode_tensor(t, model.dir()));
  onnx::TensorProto p = to_proto(wide);
  p.set_name(t.name());
  t = std::move(p);
}

void promote_node(onnx::NodeProto& n, const Model& model) {
  const std::string& op = n.op_type();
  for (auto& a : *n.mutable_attribute()) {
    const std::string& name = a.name();
    if (a.has_t()) promote_tensor(*a.mutable_t(), model);
    const bool type_attr = (op == "Cast" && name == "to") || name == "dtype" || name == "output_datatype";
    if (type_attr && a.type() == onnx::AttributeProto::INT && narrow_floating(static_cast<int32_t>(a.i()))) {
      a.set_i(onnx::TensorProto::DOUBLE);
    }
  }
  if (op == "Constant") {
    // value_float / value_floats: the same numbers as a double tensor.
    for (int i = 0; i < n.attribute_size(); ++i) {
      const auto& a = n.attribute(i);
      if (a.name() != "value_float" && a.name() != "value_floats") continue;
      onnx::TensorProto t;
      t.set_data_type(onnx::TensorProto::DOUBLE);
      if (a.name() == "value_float") {
        t.add_double_data(a.f());
      } else {
        t.add_dims(a.floats_size());
        for (float f : a.floats()) t.add_double_data(f);
      }
      n.mutable_attribute()->DeleteSubrange(i, 1);
      auto* v = n.add_attribute();
      v->set_name("value");
      v->set_type(onnx::AttributeProto::TENSOR);
      *v->mutable_t() = std::move(t);
      break;
    }
  }
  if (op == "ConstantOfShape") {
    bool has_value = false;
    for (const auto& a : n.attribute()) has_value = has_value || a.name() == "value";
    if (!has_value) {  // the default is a float 0
      auto* v = n.add_attribute();
      v->set_name("value");
      v->set_type(onnx::AttributeProto::TENSOR);
      v->mutable_t()->set_data_type(onnx::TensorProto::DOUBLE);
      v->mutable_t()->add_dims(1);
      v->mutable_t()->add_double_data(0.0);
    }
  }
}

}  // namespace

Tensor widened(Tensor t) {
  if (!narrow_floating(static_cast<int32_t>(t.dtype))) return t;
  return Tensor::from_f64(DType::float64, t.dims, t.to_f64(), t.name);
}

std::string float64_blocker(const Model& model) {
  std::string why;
  for_each_graph(model.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    if (!why.empty()) return;
    for (int i = 0; i < g.node_size() && why.empty(); ++i) {
      const auto& n = g.node(i);
      if (quantizing_ops().count(n.op_type())) {
        why = fmt::format("node {} rounds floats to integer codes", node_label(g, i, path == "main" ? "" : path + "/"));
      }
      for (const auto& a : n.attribute()) {
        if (!why.empty()) break;
        const bool type_attr = (n.op_type() == "Cast" && a.name() == "to") || a.name() == "dtype" ||
                               a.name() == "output_datatype";
        int32_t t = type_attr ? static_cast<int32_t>(a.i()) : a.has_t() ? a.t().data_type() : 0;
        if (outside_float64(t)) {
          why = fmt::format("node {} uses type {}", node_label(g, i, path == "main" ? "" : path + "/"),
                            dtype_name(static_cast<DType>(t)));
        }
      }
    }
    for (const auto& t : g.initializer()) {
      if (why.empty() && outside_float64(t.data_type())) {
        why = fmt::format("initializer '{}' has type {}", t.name(), dtype_name(static_cast<DType>(t.data_type())));
      }
    }
    for (const auto* infos : {&g.input(), &g.output(), &g.value_info()}) {
      for (const auto& vi : *infos) {
        if (why.empty() && blocked_type(vi.type())) {
          why = fmt::format("value '{}' has type {}", vi.name(), dtype_name(static_cast<DType>(blocked_type(vi.type()))));
        }
      }
    }
  });
  return why;
}

Model promote_to_float64(const Model& model) {
  Model out = model;
  for_each_graph_mut(*out.proto.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
    promote_infos(*g.mutable_input());
    promote_infos(*g.mutable_output());
    promote_infos(*g.mutable_value_info());
    for (auto& n : *g.mutable_node()) promote_node(n, model);
  });
  return out;
}

std::map<std::string, Tensor> evaluate_float64(const Model& promoted, const std::map<std::string, Tensor>& inputs,
                                               EvalOptions options) {
  std::map<std::string, Tensor> wide;
  for (const auto& [name, t] : inputs) wide.emplace(name, widened(t));
  options.float64 = true;
  return evaluate(promoted, wide, options);
}

}  // namespace bnorm
