#include "model/validate.h"

#include <catch2/catch.hpp>

#include "core/error.h"
#include "support/cli.h"

using namespace bnorm;

namespace {

// y = Identity(x) in the main graph; an If whose branch reads `branch_input`.
onnx::ModelProto with_branch(const std::string& branch_input) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  auto* g = m.mutable_graph();
  g->add_input()->set_name("x");
  g->add_input()->set_name("cond");
  auto* id = g->add_node();
  id->set_name("id");
  id->set_op_type("Identity");
  id->add_input("x");
  id->add_output("y");
  auto* n = g->add_node();
  n->set_name("if1");
  n->set_op_type("If");
  n->add_input("cond");
  n->add_output("z");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* b = a->mutable_g()->add_node();
    b->set_name(std::string(branch) + "_id");
    b->set_op_type("Identity");
    b->add_input(branch_input);
    b->add_output(std::string(branch) + "_out");
    a->mutable_g()->add_output()->set_name(std::string(branch) + "_out");
  }
  g->add_output()->set_name("z");
  return m;
}

std::string error_of(const onnx::ModelProto& proto) {
  try {
    Model m;
    m.proto = proto;
    m.path = "m.onnx";
    validate_model(m);
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitBadInput);
    return e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("validate_model: subgraphs see outer values, undefined names anywhere are errors naming the node",
          "[model][validate]") {
  CHECK(error_of(with_branch("y")) == "no error");  // an outer-scope value made by a node
  CHECK(error_of(with_branch("x")) == "no error");  // an outer-scope graph input
  CHECK(error_of(with_branch("nothing")) ==
        "node 'then_branch_id' (Identity-14): input 'nothing' names no value of the graph");
}

TEST_CASE("validate_model: a name assigned twice (not SSA) names the second node", "[model][validate]") {
  auto twice = with_branch("y");
  twice.mutable_graph()->mutable_node(1)->set_output(0, "y");  // if1 makes y too
  CHECK(error_of(twice) ==
        "node 'if1' (If-13): output 'y' is already a value of its graph (a graph input, an initializer or "
        "another node's output); ONNX graphs assign each name once");
  auto over_input = with_branch("y");
  over_input.mutable_graph()->mutable_node(0)->set_output(0, "x");  // id overwrites the input x
  over_input.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(0, "x");
  over_input.mutable_graph()->mutable_node(1)->mutable_attribute(1)->mutable_g()->mutable_node(0)->set_input(0, "x");
  CHECK(error_of(over_input) ==
        "node 'id' (Identity-14): output 'x' is already a value of its graph (a graph input, an initializer or "
        "another node's output); ONNX graphs assign each name once");
  // The same name in two branches (different graphs) is not a second assignment.
  auto branches = with_branch("y");
  for (int k = 0; k < 2; ++k) {
    auto* g = branches.mutable_graph()->mutable_node(1)->mutable_attribute(k)->mutable_g();
    g->mutable_node(0)->set_output(0, "out");
    g->mutable_output(0)->set_name("out");
  }
  CHECK(error_of(branches) == "no error");
}

TEST_CASE("validate_model: a cycle names a node on it, load_model adds the file", "[model][validate]") {
  auto m = with_branch("y");
  m.mutable_graph()->mutable_node(0)->set_input(0, "y");  // id reads its own output
  CHECK(error_of(m) == "node 'id' (Identity-14): the graph has a cycle through this node");
  test::TempDir tmp;
  std::string bytes;
  REQUIRE(m.SerializeToString(&bytes));
  test::write_file(tmp / "c.onnx", bytes);
  try {
    load_model(tmp / "c.onnx");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.file() == (tmp / "c.onnx").string());
    CHECK(e.node() == "id");
  }
}

TEST_CASE("check_output_path refuses the input and its side files, not other files", "[model][validate][output]") {
  test::TempDir tmp;
  test::write_file(tmp / "w.bin", std::string(12, '\0'));
  auto proto = with_branch("y");
  auto* t = proto.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value("w.bin");
  Model m;
  m.proto = proto;
  m.path = tmp / "in.onnx";
  test::write_file(tmp / "in.onnx", "x");
  CHECK_THROWS_WITH(check_output_path(m, tmp / "in.onnx"), Catch::Contains("the output is the input model itself"));
  CHECK_THROWS_WITH(check_output_path(m, tmp / "w.bin"), Catch::Contains("of the input"));
  SaveOptions side;
  side.external_data_name = "w.bin";
  CHECK_THROWS_WITH(check_output_path(m, tmp / "out.onnx", side), Catch::Contains("is one the input reads"));
  CHECK_NOTHROW(check_output_path(m, tmp / "out.onnx"));
}
