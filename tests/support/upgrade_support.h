// What the upgrade tests share: converting an in-memory model (and checking
// the result with ONNX's full check), comparing the numbers of two models
// on the same seeded inputs, and looking at nodes.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "eval/report/compare.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "support/test_graph.h"
#include "model/model.h"
#include "transforms/upgrade/upgrade.h"

namespace bnorm::test {

inline void add_output(onnx::GraphProto& g, const std::string& name, DType t, const std::vector<int64_t>& dims) {
  auto* o = g.add_output();
  o->set_name(name);
  auto* tt = o->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t));
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A model built node by node at `opset` (IR at least 4, or what the opset
// needs), for the upgrade tests.
struct TestNet {
  Model m;
  explicit TestNet(int64_t opset) : m(GraphBuilder(opset).model()) {
    m.proto.set_ir_version(std::max<int64_t>(4, required_ir_version(opset)));
    m.proto.mutable_graph()->set_name("g");
  }
  onnx::GraphProto& g() { return *m.proto.mutable_graph(); }
  void input(const std::string& name, DType t, const std::vector<int64_t>& dims) {
    add_output(g(), name, t, dims);
    *g().add_input() = g().output(g().output_size() - 1);
    g().mutable_output()->RemoveLast();
  }
  void init(const std::string& name, DType t, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    Tensor x = Tensor::from_f64(t, dims, v);
    x.name = name;
    encode_tensor(x, g().add_initializer());
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                        const std::string& name) {
    auto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return *n;
  }
};

// `in` upgraded with options `o`, through the checks upgrade runs on a result.
inline Model converted_with(const Model& in, const UpgradeOptions& o, UpgradeReport* report = nullptr) {
  Model out = in;
  const UpgradeReport r = upgrade_model(out, o);
  check_model_full(out.proto);
  if (report) *report = r;
  return out;
}

inline Model converted(const Model& in, int64_t to, bool inference = false, UpgradeReport* report = nullptr) {
  UpgradeOptions o;
  o.target = to;
  o.inference = inference;
  return converted_with(in, o, report);
}

// `dims`: sizes of the inputs' symbolic dims.
inline void expect_same_outputs(const Model& before, const Model& after, const std::vector<std::string>& names = {},
                                const std::map<std::string, int64_t>& dims = {}) {
  const auto inputs = random_inputs(before, 7, dims);
  EvalOptions eo;
  eo.outputs = names;
  const auto a = evaluate(before, inputs, eo);
  const auto b = evaluate(after, inputs, eo);
  for (const auto& [name, t] : a) {
    INFO("output " << name);
    REQUIRE(b.count(name));
    const Diff d = compare(t, b.at(name), model_compare_tolerance(t.dtype));
    INFO(d.problem << " max abs " << d.max_abs);
    CHECK(d.pass);
  }
}

// The message of the Error converting `m` to `to` throws; "" when it converts.
inline std::string upgrade_error_of(Model m, int64_t to) {
  UpgradeOptions o;
  o.target = to;
  try {
    upgrade_model(m, o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

inline bool has_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return true;
  }
  return false;
}

inline int count_op(const Model& m, const std::string& op) {
  int k = 0;
  for (const auto& n : m.proto.graph().node()) k += n.op_type() == op;
  return k;
}

// The first node of the main graph with this op; fails the test when none.
inline const onnx::NodeProto& first_node(const Model& m, const std::string& op) {
  for (const auto& n : m.proto.graph().node()) {
    if (n.op_type() == op) return n;
  }
  FAIL("no " << op << " node");
  throw 0;
}



inline const onnx::AttributeProto* attr_of(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// The first value of attribute `attr` (int or ints) of the first `op` node.
inline int64_t int_of(const Model& m, const std::string& op, const std::string& attr) {
  const auto* a = attr_of(first_node(m, op), attr);
  REQUIRE(a);
  return a->type() == onnx::AttributeProto::INTS ? a->ints(0) : a->i();
}

// Converts `m` through every opset of `path`, checking each result
// (ONNX's checker at <= 17, bnorm's schema check above, in converted())
// and its numbers against the original's.
inline Model through(const Model& m, std::initializer_list<int64_t> path) {
  Model cur = m;
  for (int64_t to : path) {
    INFO("to opset " << to);
    cur = converted(cur, to);
    CHECK(default_opset(cur.proto) == to);
    CHECK(cur.proto.ir_version() >= required_ir_version(to));
    expect_same_outputs(m, cur);
  }
  return cur;
}

}  // namespace bnorm::test
