// bnorm upgrade up past opset 9, where ONNX removed its experimental ops
// (ImageScaler, Crop, Affine, ScaledTanh, ParametricSoftplus, Scale: written
// as today's ops), and down below 9, where ConstantOfShape does not exist yet
// (an initializer of its values); continued from upgrade_lower_test.cpp.
// Each converted model is compared with the original through the evaluator
// (through()); refusals are checked by their message.
#include <catch2/catch.hpp>

#include "support/cli.h"
#include "support/lower_support.h"
#include "support/upgrade_support.h"
#include "transforms/upgrade/preflight.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// The experimental ops of opsets 1..9 in one chain at `opset`: ImageScaler
// (scale and per-channel bias), Crop with and without scale, Affine,
// ScaledTanh, ParametricSoftplus, Scale.
Model experimental_chain(int64_t opset) {
  Model m = net(opset);
  input(m, "x", DType::float32, {1, 3, 6, 7});
  auto& scaler = node(m, "ImageScaler", {"x"}, {"s"}, "scaler");
  set_attr(scaler, "scale", 0.5f);
  auto* bias = scaler.add_attribute();
  bias->set_name("bias");
  bias->set_type(onnx::AttributeProto::FLOATS);
  for (float b : {-1.0f, 0.25f, 2.0f}) bias->add_floats(b);
  set_ints(node(m, "Crop", {"s"}, {"c"}, "crop"), "border", {1, 2, 0, 1});  // rows 2..4, columns 1..6
  auto& crop2 = node(m, "Crop", {"c"}, {"c2"}, "crop_scaled");
  set_ints(crop2, "border", {1, 0, 0, 0});
  set_ints(crop2, "scale", {2, 3});
  auto& affine = node(m, "Affine", {"c2"}, {"a"}, "affine");
  set_attr(affine, "alpha", 2.0f);
  set_attr(affine, "beta", 0.5f);
  auto& tanh = node(m, "ScaledTanh", {"a"}, {"t"}, "scaled_tanh");
  set_attr(tanh, "alpha", 1.5f);
  set_attr(tanh, "beta", 0.75f);
  auto& softplus = node(m, "ParametricSoftplus", {"t"}, {"p"}, "softplus");
  set_attr(softplus, "alpha", 0.5f);
  set_attr(softplus, "beta", 2.0f);
  set_attr(node(m, "Scale", {"p"}, {"y"}, "scale"), "scale", 3.0f);
  add_output(g(m), "y", DType::float32, {1, 3, 2, 3});
  return m;
}

}  // namespace

TEST_CASE("the experimental ops ONNX removed after opset 9 are written as today's ops going up", "[upgrade][lower]") {
  for (const int64_t opset : {7, 9}) {
    INFO("from opset " << opset);
    const Model m = experimental_chain(opset);
    const Model up = through(m, {10, 13, 17, 23});
    for (const char* op : {"ImageScaler", "Crop", "Affine", "ScaledTanh", "ParametricSoftplus", "Scale"}) {
      CHECK(count_op(up, op) == 0);
    }
    CHECK(count_op(up, "Slice") == 2);
  }
  // Below opset 7 the Mul and Add carry the legacy broadcast attributes.
  const Model legacy = experimental_chain(6);
  const Model up = through(legacy, {7, 10});
  CHECK(count_op(up, "ImageScaler") == 0);
}

TEST_CASE("an experimental op that cannot be written otherwise is named with why", "[upgrade][lower]") {
  Model m = net(9);
  input(m, "x", DType::float32, {1, 3});
  set_attr(node(m, "ScaledTanh", {"x"}, {"y"}, "st"), "alpha", 2.0f);  // no beta: the schema has no default
  add_output(g(m), "y", DType::float32, {1, 3});
  const std::string e = upgrade_error_of(m, 10);
  CHECK_THAT(e, Catch::Contains("'st'") && Catch::Contains("was removed from ONNX after opset 9") &&
                    Catch::Contains("'beta' is missing"));
  const UpgradePlan plan = plan_upgrade_model(m, 10);
  REQUIRE(plan.blockers.size() == 1);
  CHECK_THAT(plan.blockers[0], Catch::Contains("'beta' is missing"));
}

TEST_CASE("ConstantOfShape below 9 becomes an initializer of its values", "[upgrade][lower]") {
  Model m = net(13);
  input(m, "x", DType::float32, {2, 3});
  Tensor shape = Tensor::from_f64(DType::int64, {2}, {2, 3});
  shape.name = "shape";
  *g(m).add_initializer() = to_proto(shape);
  auto& fill = node(m, "ConstantOfShape", {"shape"}, {"c"}, "fill");
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = to_proto(Tensor::from_f64(DType::float32, {1}, {0.75}));
  node(m, "Mul", {"x", "c"}, {"y"}, "mul");
  add_output(g(m), "y", DType::float32, {2, 3});
  UpgradeReport r;
  const Model down = converted(m, 8, false, &r);
  CHECK(count_op(down, "ConstantOfShape") == 0);
  expect_same_outputs(m, down);
  REQUIRE(r.rewrites.size() >= 1);
  CHECK(r.rewrites[0].what == "written as an initializer");
  const Model back = through(down, {9, 13});
  expect_same_outputs(m, back);
}

TEST_CASE("at IR 3, a ConstantOfShape weight written as an initializer is a graph input too, so shapes reach past it",
          "[upgrade][lower]") {
  // As onnx_light's ResNet-50 (IR 3, opset 9): without the graph input,
  // shape inference ignored the initializer and the Sum below 8 (legacy
  // broadcast) could not know its inputs' shapes.
  Model m = net(9);
  m.proto.set_ir_version(3);
  input(m, "x", DType::float32, {1, 2, 4, 4});
  Tensor shape = Tensor::from_f64(DType::int64, {4}, {2, 2, 1, 1});
  shape.name = "w_shape";
  *g(m).add_initializer() = to_proto(shape);
  *g(m).add_input() = g(m).input(0);
  g(m).mutable_input(1)->set_name("w_shape");
  g(m).mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DType::int64));
  g(m).mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->clear_dim();
  g(m).mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto& fill = node(m, "ConstantOfShape", {"w_shape"}, {"w"}, "fill");
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = to_proto(Tensor::from_f64(DType::float32, {1}, {0.5}));
  node(m, "Conv", {"x", "w"}, {"c"}, "conv");
  node(m, "Sum", {"c", "x"}, {"y"}, "sum");
  add_output(g(m), "y", DType::float32, {1, 2, 4, 4});
  const Model down = through(m, {6});
  CHECK(count_op(down, "ConstantOfShape") == 0);
  bool listed = false;
  for (const auto& in : down.proto.graph().input()) listed = listed || in.name() == "w";
  CHECK(listed);
}

TEST_CASE("a node to lower without its required inputs or output is refused by name, not read", "[upgrade][lower]") {
  // Review: the lowerings read input(0)/output(0) of a node that may have
  // none (shape inference does not check arity): undefined behaviour.
  Model m = net(20);
  input(m, "x", DType::float32, {2, 3});
  node(m, "Gelu", {}, {"y"}, "empty_gelu");
  add_output(g(m), "y", DType::float32, {2, 3});
  CHECK_THAT(upgrade_error_of(m, 19), Catch::Contains("empty_gelu") && Catch::Contains("needs 1 input"));
  CHECK_FALSE(plan_upgrade_model(m, 19).blockers.empty());

  Model ln = net(17);
  input(ln, "x", DType::float32, {2, 3});
  node(ln, "LayerNormalization", {"x"}, {"y"}, "ln_without_scale");
  add_output(g(ln), "y", DType::float32, {2, 3});
  CHECK_THAT(upgrade_error_of(ln, 16), Catch::Contains("ln_without_scale") && Catch::Contains("needs 2 inputs"));
}
