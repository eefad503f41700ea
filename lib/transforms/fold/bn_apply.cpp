// The writing half of fold: applies FoldPlans to the model (see bn_fold.h).
#include <algorithm>
#include <map>
#include <set>

#include "model/model_walk.h"
#include "model/prune.h"
#include "model/tensor_proto.h"
#include "transforms/fold/bn_plan.h"

namespace bnorm {

namespace {

onnx::TensorProto* find_initializer(onnx::GraphProto& g, const std::string& name) {
  for (auto& t : *g.mutable_initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

void set_input(onnx::NodeProto& n, int i, const std::string& name) {
  while (n.input_size() <= i) n.add_input("");
  n.set_input(i, name);
}

// A new initializer; IR < 4 models also list it as a graph input.
void add_initializer(onnx::GraphProto& g, const Tensor& t, const std::string& name, bool list_as_input) {
  auto* init = g.add_initializer();
  encode_tensor(t, init);
  init->set_name(name);
  if (!list_as_input) return;
  add_tensor_input(g, name, static_cast<int32_t>(t.dtype), t.dims);
}


void set_float_attr(onnx::NodeProto& n, const std::string& name, float v) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.name() == name) {
      a.set_f(v);
      return;
    }
  }
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void add_int_attr_if_absent(onnx::NodeProto& n, const std::string& name, int64_t v) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return;
  }
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

}  // namespace

void put_tensor(onnx::GraphProto& g, const Tensor& t, const std::string& name, bool in_place, bool list_as_input) {
  if (in_place) {
    onnx::TensorProto* init = find_initializer(g, name);
    encode_tensor(t, init);
  } else {
    add_initializer(g, t, name, list_as_input);
  }
}

void apply_fold(Model& model, FoldPlan& p, int64_t opset, bool weight_written, FoldFinish& finish) {
  const bool inputs_list_initializers = model.proto.ir_version() < 4;
  onnx::GraphProto& g = *p.graph;
  onnx::NodeProto& producer = *g.mutable_node(p.producer_index);
  if (!weight_written) put_tensor(g, p.weight, p.weight_name, p.weight_in_place, inputs_list_initializers);
  set_input(producer, 1, p.weight_name);
  put_tensor(g, p.bias, p.bias_name, p.bias_in_place, inputs_list_initializers);
  set_input(producer, 2, p.bias_name);
  // X (2-D) x W + b is Gemm.
  if (p.kind == ProducerKind::matmul) producer.set_op_type("Gemm");
  if (p.set_beta_one) set_float_attr(producer, "beta", 1.0f);
  // Before opset 7, a Gemm C of shape [N] needs broadcast = 1.
  const bool gemm = p.kind == ProducerKind::matmul || p.kind == ProducerKind::gemm;
  if (gemm && opset < 7 && p.bias.dims.size() == 1) add_int_attr_if_absent(producer, "broadcast", 1);
  producer.set_output(0, p.bn_output);
  finish.bn_positions[&g].push_back(p.bn_index);
  finish.released.insert(p.released.begin(), p.released.end());
  finish.stale.insert(p.producer_output);
}

void finish_folds(Model& model, FoldFinish& finish) {
  for (auto& [g, positions] : finish.bn_positions) {
    std::sort(positions.rbegin(), positions.rend());
    for (int i : positions) g->mutable_node()->DeleteSubrange(i, 1);
    auto* vi = g->mutable_value_info();
    vi->erase(std::remove_if(vi->begin(), vi->end(),
                             [&](const onnx::ValueInfoProto& v) { return finish.stale.count(v.name()) > 0; }),
              vi->end());
  }
  remove_released(model.proto, std::move(finish.released));
}

}  // namespace bnorm
