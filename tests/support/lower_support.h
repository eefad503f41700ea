// What the lowering tests share (upgrade_lower_test.cpp,
// upgrade_lower_experimental_test.cpp; upgrade_high_steps_test.cpp builds
// its models the same way): models built node by node at an
// opset (IR 3 at the lowest), constants of distinct values, and what the
// report says of a node.
#pragma once

#include <catch2/catch.hpp>

#include "model/model_walk.h"
#include "model/tensor_proto.h"
#include "support/test_graph.h"
#include "support/upgrade_support.h"

namespace bnorm::test {

inline Model net(int64_t opset) {
  GraphBuilder b(opset);
  Model m = b.model();
  m.proto.set_ir_version(std::max<int64_t>(3, required_ir_version(opset)));
  m.proto.mutable_graph()->set_name("g");
  return m;
}

inline onnx::GraphProto& g(Model& m) { return *m.proto.mutable_graph(); }

inline void input(Model& m, const std::string& name, DType t, const std::vector<int64_t>& dims) {
  add_output(g(m), name, t, dims);
  *g(m).add_input() = g(m).output(g(m).output_size() - 1);
  g(m).mutable_output()->RemoveLast();
}

inline onnx::NodeProto& node(Model& m, const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                      const std::string& name) {
  auto* n = g(m).add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return *n;
}

// A constant of `dims` with distinct values (1.5, 0.25, ..., no two alike).
inline void constant(Model& m, const std::string& name, DType t, const std::vector<int64_t>& dims, double base) {
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < numel; ++i) v.push_back(base + 0.25 * static_cast<double>(i) * (i % 2 ? -1 : 1));
  Tensor c = Tensor::from_f64(t, dims, v);
  c.name = name;
  *g(m).add_initializer() = to_proto(c);
}

inline bool has_op(const Model& m, const std::string& op) {
  bool found = false;
  for_each_graph(m.proto.graph(), "main", [&](const onnx::GraphProto& gr, const std::string&) {
    for (const auto& n : gr.node()) found = found || n.op_type() == op;
  });
  return found;
}

// The rewrite the report has for node `name`; fails the test when none.
inline std::string rewrite_of(const UpgradeReport& r, const std::string& name) {
  for (const auto& w : r.rewrites) {
    if (w.name == name) return w.what;
  }
  FAIL("no rewrite for " << name);
  return "";
}

}  // namespace bnorm::test
