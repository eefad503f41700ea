// Legacy forms whose conversion needs shapes the model does not declare
// (issue 26, from the sweep of real models): the legacy broadcast of Add,
// Sub, Mul, Div, Pow with a symbolic batch (ONNX 1.12's adapters need every
// dim as a number), its axis with a rank found back through Conv, the
// normalizations and the experimental ops, and a Reshape to a computed shape
// going below 5. Expected numbers: the model before conversion, run by the
// evaluator.
#include <catch2/catch.hpp>

#include "model/attrs.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

void symbolic_batch(onnx::ValueInfoProto& v) {
  v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
}

const std::map<std::string, int64_t> kBatch{{"N", 2}};

}  // namespace

TEST_CASE("legacy broadcast Add, Sub, Mul, Div, Pow with a symbolic batch cross 7 both ways with their numbers",
          "[upgrade][legacy]") {
  // As WinML's candy (opset 1, batch 'None') going up and a Keras export (batch 'N') going down: ONNX 1.12's
  // adapters failed with "Dimension is a param instead of an int".
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    INFO(op);
    TestNet t(6);
    t.input("x", DType::float32, {2, 3, 4, 4});
    symbolic_batch(*t.g().mutable_input(0));
    t.init("b", DType::float32, {3}, {1, 2, 3});
    auto& n = t.node(op, {"x", "b"}, {"y"}, "legacy");
    set_attr(n, "broadcast", int64_t{1});
    set_attr(n, "axis", int64_t{1});
    add_output(t.g(), "y", DType::float32, {2, 3, 4, 4});
    symbolic_batch(*t.g().mutable_output(0));
    const Model up = converted(t.m, 13);
    expect_same_outputs(t.m, up, {}, kBatch);
    const Model down = converted(up, 6);  // numpy-style at 13 back to the legacy attributes
    expect_same_outputs(t.m, down, {}, kBatch);
  }
}

TEST_CASE("a legacy broadcast axis going up to 7 finds its input's rank back through Conv, InstanceNormalization and "
          "the experimental ops",
          "[upgrade][legacy]") {
  // As WinML's candy to 7..9: ImageScaler and Crop stop shape inference; the rank of the Mul's input follows from
  // the producers (Crop, Conv, InstanceNormalization, Relu, Affine keep their input's rank).
  TestNet t(1);
  t.m.proto.set_ir_version(3);
  t.input("x", DType::float32, {1, 3, 8, 8});
  auto& scaler = t.node("ImageScaler", {"x"}, {"s"}, "scaler");
  set_attr(scaler, "scale", 0.5f);
  set_ints(t.node("Crop", {"s"}, {"c"}, "crop"), "border", {1, 1, 1, 1});
  t.init("w", DType::float32, {3, 3, 1, 1}, {1, 0.5, 0, 0, 1, -1, 0.25, 0, 1});
  set_ints(t.node("Conv", {"c", "w"}, {"v"}, "conv"), "kernel_shape", {1, 1});
  t.init("scale", DType::float32, {3}, {1, 2, 0.5});
  t.init("bias", DType::float32, {3}, {0, 1, -1});
  t.node("InstanceNormalization", {"v", "scale", "bias"}, {"i"}, "norm");
  t.node("Relu", {"i"}, {"r"}, "relu");
  auto& affine = t.node("Affine", {"r"}, {"a"}, "affine");
  set_attr(affine, "alpha", 2.0f);
  t.init("m", DType::float32, {3}, {1, -2, 3});
  auto& mul = t.node("Mul", {"a", "m"}, {"y"}, "Mul");
  set_attr(mul, "broadcast", int64_t{1});
  set_attr(mul, "axis", int64_t{1});
  add_output(t.g(), "y", DType::float32, {1, 3, 6, 6});
  for (const int64_t to : {7, 8, 9}) {
    INFO("opset " << to);
    expect_same_outputs(t.m, converted(t.m, to));
  }
}

TEST_CASE("Reshape to a computed shape goes below 5 with its output's inferred dims as the shape attribute",
          "[upgrade][legacy]") {
  // As ulfd_rfb320 and ulfd_slim320 (opset 9) going to 1..4: the shape input is Concat(Gather(Shape(x)), [-1]),
  // not a constant; the output's dims are known (a symbolic batch: -1, the one dim Reshape infers).
  for (const bool symbolic : {false, true}) {
    INFO((symbolic ? "batch N" : "static"));
    TestNet t(9);
    t.input("x", DType::float32, {2, 3, 4});
    if (symbolic) symbolic_batch(*t.g().mutable_input(0));
    t.init("zero", DType::int64, {1}, {0});
    t.init("minus_one", DType::int64, {1}, {-1});
    t.node("Shape", {"x"}, {"s"}, "shape");
    t.node("Gather", {"s", "zero"}, {"n"}, "gather");
    set_attr(t.node("Concat", {"n", "minus_one"}, {"target"}, "concat"), "axis", int64_t{0});
    t.node("Reshape", {"x", "target"}, {"y"}, "reshape");
    add_output(t.g(), "y", DType::float32, {2, 12});
    if (symbolic) symbolic_batch(*t.g().mutable_output(0));
    const Model down = converted(t.m, 4);
    // The shape computation nothing reads any more is removed with it (at 3 its int64 Concat would be invalid).
    for (const auto& n : down.proto.graph().node()) CHECK(n.op_type() == "Reshape");
    converted(t.m, 3);
    const auto* shape = attr_of(first_node(down, "Reshape"), "shape");
    REQUIRE(shape);
    CHECK(std::vector<int64_t>(shape->ints().begin(), shape->ints().end()) ==
          (symbolic ? std::vector<int64_t>{-1, 12} : std::vector<int64_t>{2, 12}));
    expect_same_outputs(t.m, down, {}, symbolic ? kBatch : std::map<std::string, int64_t>{});
  }
}

TEST_CASE("an Add of two values after the experimental ops goes from 7 back to 1: their shapes are inferred",
          "[upgrade][legacy]") {
  // As WinML's candy back from 7..9 to 1: the residual Adds read values past ImageScaler and Crop, whose shapes
  // ONNX 1.12 does not infer; below 7 the Add needs them (same shapes: no broadcast attribute).
  TestNet t(1);
  t.m.proto.set_ir_version(3);
  t.input("x", DType::float32, {1, 3, 8, 8});
  set_attr(t.node("ImageScaler", {"x"}, {"s"}, "scaler"), "scale", 0.5f);
  set_ints(t.node("Crop", {"s"}, {"c"}, "crop"), "border", {1, 2, 0, 1});
  t.node("Relu", {"c"}, {"r"}, "relu");
  t.node("Add", {"c", "r"}, {"y"}, "add");
  add_output(t.g(), "y", DType::float32, {1, 3, 5, 7});
  const Model up = converted(t.m, 7);
  expect_same_outputs(t.m, up);
  expect_same_outputs(t.m, converted(up, 1));
}
