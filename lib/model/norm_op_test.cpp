#include "model/norm_op.h"

#include <catch2/catch.hpp>

#include "core/error.h"

using namespace bnorm;

namespace {

onnx::NodeProto bn_node(int outputs) {
  onnx::NodeProto n;
  n.set_op_type("BatchNormalization");
  n.set_name("bn");
  for (const char* in : {"x", "s", "b", "m", "v"}) n.add_input(in);
  const char* outs[] = {"y", "rm", "rv", "sm", "sv"};
  for (int i = 0; i < outputs; ++i) n.add_output(outs[i]);
  return n;
}

void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_float(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

}  // namespace

TEST_CASE("the schema version in force is the newest not above the opset", "[norm_op]") {
  CHECK(norm_schema_version("BatchNormalization", 1) == 1);
  CHECK(norm_schema_version("BatchNormalization", 5) == 1);
  CHECK(norm_schema_version("BatchNormalization", 6) == 6);
  CHECK(norm_schema_version("BatchNormalization", 8) == 7);
  CHECK(norm_schema_version("BatchNormalization", 13) == 9);
  CHECK(norm_schema_version("BatchNormalization", 14) == 14);
  CHECK(norm_schema_version("BatchNormalization", 22) == 15);
  CHECK(norm_schema_version("InstanceNormalization", 5) == 1);
  CHECK(norm_schema_version("InstanceNormalization", 22) == 6);
  CHECK(norm_schema_version("Relu", 22) == 0);
}

TEST_CASE("BN 1 and 6 without is_test are training nodes, the spec's default", "[norm_op]") {
  for (int opset : {1, 6}) {
    auto node = bn_node(1);
    const NormNode n = read_norm_node(node, opset);
    CHECK(n.training);
    CHECK_FALSE(n.is_test.has_value());
    CHECK(n.mode_reason.find("absent") != std::string::npos);
  }
}

TEST_CASE("BN 6 with is_test = 1 is inference and keeps the written attributes", "[norm_op]") {
  auto node = bn_node(1);
  set_int(node, "is_test", 1);
  set_int(node, "spatial", 0);
  set_float(node, "epsilon", 1e-3f);
  const NormNode n = read_norm_node(node, 6);
  CHECK_FALSE(n.training);
  CHECK(n.version == 6);
  CHECK(n.epsilon == 1e-3f);
  CHECK(n.momentum == 0.9f);
  CHECK_FALSE(n.spatial);
  REQUIRE(n.spatial_attr);
  CHECK(*n.spatial_attr == 0);
}

TEST_CASE("BN 7 to 13: the output count decides the mode", "[norm_op]") {
  for (int opset : {7, 8, 9, 13}) {
    CHECK_FALSE(read_norm_node(bn_node(1), opset).training);
    CHECK(read_norm_node(bn_node(5), opset).training);
    const NormNode three = read_norm_node(bn_node(3), opset);
    CHECK(three.training);
    CHECK(three.warnings.size() == 1);
  }
}

TEST_CASE("trailing empty output names are absent outputs", "[norm_op]") {
  auto node = bn_node(1);
  for (int i = 0; i < 4; ++i) node.add_output("");
  const NormNode n = read_norm_node(node, 9);
  CHECK(n.outputs == 1);
  CHECK_FALSE(n.training);
}

TEST_CASE("BN 14 and 15 follow training_mode, default 0", "[norm_op]") {
  CHECK_FALSE(read_norm_node(bn_node(1), 14).training);
  auto node = bn_node(3);
  set_int(node, "training_mode", 1);
  CHECK(read_norm_node(node, 15).training);
}

TEST_CASE("attributes of another version are reported, not obeyed", "[norm_op]") {
  auto node = bn_node(1);
  set_int(node, "is_test", 0);  // does not exist at 9
  const NormNode n = read_norm_node(node, 9);
  CHECK_FALSE(n.training);
  CHECK_FALSE(n.is_test.has_value());
  REQUIRE(n.warnings.size() == 1);
  CHECK(n.warnings[0].find("is_test") != std::string::npos);
}

TEST_CASE("a flag attribute outside 0 and 1 is an input error naming the node", "[norm_op]") {
  auto node = bn_node(1);
  set_int(node, "is_test", 7);
  try {
    read_norm_node(node, 6);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitBadInput);
    CHECK(e.message().find("node 'bn' (BatchNormalization-6)") != std::string::npos);
    CHECK(e.message().find("is_test") != std::string::npos);
  }
}

TEST_CASE("a float attribute stored as an int is an input error", "[norm_op]") {
  auto node = bn_node(1);
  set_int(node, "epsilon", 1);
  CHECK_THROWS_AS(read_norm_node(node, 9), Error);
}

TEST_CASE("InstanceNormalization 1 keeps consumed_inputs as legacy", "[norm_op]") {
  onnx::NodeProto node;
  node.set_op_type("InstanceNormalization");
  for (const char* in : {"x", "s", "b"}) node.add_input(in);
  node.add_output("y");
  auto* a = node.add_attribute();
  a->set_name("consumed_inputs");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(0);
  const NormNode n1 = read_norm_node(node, 1);
  CHECK(n1.kind == NormKind::instance_norm);
  CHECK(n1.consumed_inputs.has_value());
  const NormNode n6 = read_norm_node(node, 6);
  CHECK_FALSE(n6.consumed_inputs.has_value());
  CHECK(n6.warnings.size() == 1);
}
