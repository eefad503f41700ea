#include "model/graph_index.h"

#include <catch2/catch.hpp>

#include "model/model.h"
#include "model/tensor_proto.h"
#include "support/cli.h"

using namespace bnorm;

namespace {
const onnx::NodeProto& node_named(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node()) {
    if (n.name() == name) return n;
  }
  FAIL("no node " << name);
  throw;
}
}  // namespace

TEST_CASE("uses inside subgraphs are recorded on the outer value", "[graph_index]") {
  const Model m = load_model(test::testdata("subgraph_if_opset11.onnx"));
  const GraphIndex index(m.proto);
  REQUIRE(index.scopes().size() == 3);
  const auto& then_scope = **std::find_if(index.scopes().begin(), index.scopes().end(), [](const auto& s) {
    return s->path == "main/if_node.then_branch";
  });
  CHECK(then_scope.parent == &index.main());
  CHECK(then_scope.owner->op_type() == "If");
  // The then-branch BN's scale is an initializer of the main graph.
  const onnx::NodeProto& bn = node_named(*then_scope.graph, "then_bn");
  CHECK(&index.scope_of(&bn) == &then_scope);
  const GraphIndex::Value* scale = index.find(then_scope, bn.input(1));
  REQUIRE(scale);
  CHECK(scale->scope == &index.main());
  bool used_from_then = false;
  for (const auto& u : scale->uses) used_from_then = used_from_then || u.node == &bn;
  CHECK(used_from_then);
  const auto c = index.constant(then_scope, bn.input(1));
  REQUIRE(c);
  CHECK(c->kind == GraphIndex::ConstKind::initializer);
  // Unknown names resolve to nothing.
  CHECK(index.find(then_scope, "no such value") == nullptr);
}

TEST_CASE("Constant nodes resolve from value, value_float and value_floats", "[graph_index]") {
  const Model m = load_model(test::testdata("constant_params_opset12.onnx"));
  const GraphIndex index(m.proto);
  const onnx::NodeProto& bn = node_named(m.proto.graph(), "bn_c1");
  for (int i = 1; i <= 3; ++i) {
    const auto c = index.constant(index.main(), bn.input(i));
    REQUIRE(c);
    CHECK(c->kind == GraphIndex::ConstKind::constant_node);
    CHECK(c->node != nullptr);
    CHECK(decode_tensor(*c->tensor).numel() == 1);
  }
  // An X made by a Conv is not a constant.
  CHECK_FALSE(index.constant(index.main(), bn.input(0)));
}

TEST_CASE("initializers listed as graph inputs are constants of their own kind", "[graph_index]") {
  const Model m = load_model(test::testdata("demo_opset6.onnx"));
  const GraphIndex index(m.proto);
  const onnx::NodeProto& bn = node_named(m.proto.graph(), "bn1");
  const auto c = index.constant(index.main(), bn.input(1));
  REQUIRE(c);
  CHECK(c->kind == GraphIndex::ConstKind::initializer_graph_input);
  const GraphIndex::Value* x = index.find(index.main(), bn.input(0));
  REQUIRE(x);
  REQUIRE(x->producer);
  CHECK(x->producer->name() == "conv1");
  CHECK(x->uses.size() == 1);
  CHECK_FALSE(x->graph_output);
}

TEST_CASE("Identity of a constant and ConstantOfShape of a constant shape are constants", "[graph_index]") {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(2);
  shape->add_int64_data(3);
  auto* cos = g->add_node();
  cos->set_op_type("ConstantOfShape");
  cos->add_input("shape");
  cos->add_output("filled");
  auto* value = cos->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(2.5f);
  auto* id = g->add_node();
  id->set_op_type("Identity");
  id->add_input("filled");
  id->add_output("copy");
  auto* dyn = g->add_node();
  dyn->set_op_type("Identity");
  dyn->add_input("x");
  dyn->add_output("not_constant");
  g->add_input()->set_name("x");

  const GraphIndex index(m);
  const auto filled = index.constant(index.main(), "filled");
  REQUIRE(filled);
  CHECK(filled->kind == GraphIndex::ConstKind::computed);
  const Tensor t = decode_tensor(*filled->tensor);
  CHECK(t.dims == std::vector<int64_t>{2, 3});
  CHECK(t.to_f64() == std::vector<double>(6, 2.5));
  const auto copy = index.constant(index.main(), "copy");
  REQUIRE(copy);
  CHECK(decode_tensor(*copy->tensor).to_f64() == t.to_f64());
  CHECK_FALSE(index.constant(index.main(), "not_constant"));
}
