// Legacy attributes going up (issue 26). Every opset-1 op that carried
// `consumed_inputs` loses it: ONNX's 1 -> 6 adapter drops it for the ops
// ONNX converts, the consumed_inputs_6 step for those bnorm converts itself
// further up (Clip, Max, Mean, Min, Sum: bnorm's check refused its own
// result before). Concat-1's optional axis is written when it becomes
// required (concat_4: refused for targets of 11 and above before).
#include <catch2/catch.hpp>

#include "core/error.h"
#include "model/attrs.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// One node of `op` at opset 1 (IR 3) with consumed_inputs, float [2, 3] inputs.
Model opset1(const std::string& op, int inputs) {
  GraphBuilder b(1);
  std::vector<std::string> ins;
  for (int i = 0; i < inputs; ++i) {
    ins.push_back("x" + std::to_string(i));
    b.input(ins.back(), DType::float32, {2, 3});
  }
  auto& n = b.node(op, ins, {"y"}, "n");
  set_ints(n, "consumed_inputs", std::vector<int64_t>(static_cast<size_t>(inputs), 0));
  if (op == "Clip") {
    set_attr(n, "min", -0.5f);
    set_attr(n, "max", 0.5f);
  }
  add_output(b.graph(), "y", DType::float32, {2, 3});
  b.graph().set_name("g");
  Model m = b.model();
  m.proto.set_ir_version(3);
  return m;
}

}  // namespace

TEST_CASE("every opset-1 op with consumed_inputs loses it going up, with its numbers", "[upgrade][consumed_inputs]") {
  const std::vector<std::pair<std::string, int>> ops = {
      {"Abs", 1},  {"Ceil", 1},  {"Clip", 1},       {"Elu", 1},     {"Exp", 1},    {"Floor", 1}, {"HardSigmoid", 1},
      {"LeakyRelu", 1}, {"Log", 1}, {"Neg", 1},     {"Reciprocal", 1}, {"Relu", 1}, {"Selu", 1}, {"Sigmoid", 1},
      {"Sqrt", 1}, {"Tanh", 1},  {"Add", 2},        {"Sub", 2},     {"Mul", 2},    {"Div", 2},   {"PRelu", 2},
      {"Max", 2},  {"Mean", 2},  {"Min", 2},        {"Sum", 2}};
  for (const auto& [op, inputs] : ops) {
    const Model m = opset1(op, inputs);
    for (const int64_t to : {6, 8, 13, 17}) {
      INFO(op << "-1 -> opset " << to);
      const Model up = converted(m, to);  // ONNX's checker in converted()
      for (const auto& n : up.proto.graph().node())
        for (const auto& a : n.attribute()) CHECK(a.name() != "consumed_inputs");
      expect_same_outputs(m, up);  // NaN (Log, Sqrt of a negative input) matches NaN
    }
  }
}

TEST_CASE("Concat-1 without axis (default 1) gets axis 1 going up to every opset, with its numbers",
          "[upgrade][consumed_inputs]") {
  GraphBuilder b(1);
  b.input("a", DType::float32, {2, 3});
  b.input("b", DType::float32, {2, 3});
  b.node("Concat", {"a", "b"}, {"y"}, "cat");
  add_output(b.graph(), "y", DType::float32, {2, 6});
  b.graph().set_name("g");
  Model m = b.model();
  m.proto.set_ir_version(3);
  for (const int64_t to : {4, 10, 11, 13, 17}) {
    INFO("opset " << to);
    const Model up = converted(m, to);
    REQUIRE(up.proto.graph().node_size() == 1);
    const auto* axis = find_attr(up.proto.graph().node(0), "axis");
    REQUIRE(axis);
    CHECK(axis->i() == 1);
    expect_same_outputs(m, up);
  }
}

TEST_CASE("Reshape-14 with allowzero = 1 goes below 14 when its constant shape holds no 0, else is refused by name",
          "[upgrade][consumed_inputs]") {
  auto reshape = [](std::vector<double> shape) {
    GraphBuilder b(14);
    b.input("x", DType::float32, {2, 3, 4});
    b.initializer("shape", tensor_of(DType::int64, {static_cast<int64_t>(shape.size())}, shape));
    set_attr(b.node("Reshape", {"x", "shape"}, {"y"}, "r"), "allowzero", int64_t{1});
    add_output(b.graph(), "y", DType::float32, {});
    b.graph().set_name("g");
    return b.model();
  };
  const Model m = reshape({6, -1});
  for (const int64_t to : {13, 5, 4}) {
    INFO("opset " << to);
    const Model down = converted(m, to);
    CHECK_FALSE(find_attr(down.proto.graph().node(0), "allowzero"));
    expect_same_outputs(m, down);
  }
  const std::string why = upgrade_error_of(reshape({0, 24}), 13);
  CHECK_THAT(why, Catch::Contains("'r'") && Catch::Contains("allowzero = 1 with a 0 in the shape"));
  CHECK_THAT(why, !Catch::Contains("Assertion"));
}

TEST_CASE("LpPool-1 without kernel_shape (no default at 1, required from 2) is refused going up, by name",
          "[upgrade][consumed_inputs]") {
  GraphBuilder b(1);
  b.input("x", DType::float32, {1, 1, 4, 4});
  b.node("LpPool", {"x"}, {"y"}, "pool");
  add_output(b.graph(), "y", DType::float32, {1, 1, 1, 1});
  b.graph().set_name("g");
  Model m = b.model();
  m.proto.set_ir_version(3);
  const std::string what = upgrade_error_of(m, 11);
  INFO(what);
  CHECK(what.find("'pool'") != std::string::npos);
  CHECK(what.find("kernel_shape") != std::string::npos);
}
