// For the evaluator's tests only: builds small models in memory.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

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

}  // namespace bnorm::test
