// bnorm's shape inference on small graphs: data propagation through
// Shape -> Gather -> Concat -> Reshape (known and symbolic dims), what a
// declaration keeps, unknown ops, the merge after ONNX's inference, and the
// rules of opset 27's LinearAttention and CausalConvWithState.
#include <catch2/catch.hpp>

#include "model/shape_infer/shape_infer.h"
#include "model/tensor_proto.h"
#include "support/test_graph.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

Tensor int64s(const std::vector<int64_t>& v) {
  return Tensor::from_f64(DType::int64, {static_cast<int64_t>(v.size())}, std::vector<double>(v.begin(), v.end()));
}

const InferredValue& value_of(const ModelShapes& s, const Model& m, const std::string& name) {
  return s.at(&m.proto.graph()).at(name);
}

std::string text_of(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& v : m.graph().value_info())
    if (v.name() == name) return from_type(v.type()).text();
  for (const auto& v : m.graph().output())
    if (v.name() == name) return from_type(v.type()).text();
  return "none";
}

// y = Reshape(x, Concat(Gather(Shape(x), [0]), [-1]))
GraphBuilder flatten_by_shape(int64_t opset) {
  GraphBuilder b(opset);
  b.initializer("zero", int64s({0}));
  b.initializer("minus_one", int64s({-1}));
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  set_attr(b.node("Concat", {"n", "minus_one"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  return b;
}

}  // namespace

TEST_CASE("data propagation: Reshape to Concat(Gather(Shape(x), 0), -1) has a known shape", "[infer]") {
  GraphBuilder b = flatten_by_shape(13);
  b.input("x", DType::float32, {2, 3, 4});
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "s").values == std::optional(std::vector<InferredDim>{InferredDim::of(2), InferredDim::of(3), InferredDim::of(4)}));
  CHECK(value_of(s, b.model(), "target").text() == "int64[2]");
  CHECK(value_of(s, b.model(), "y").text() == "float[2,12]");
}

TEST_CASE("data propagation keeps symbolic dims: [N,3,4] reshaped to [N,-1] is [N,12]", "[infer]") {
  GraphBuilder b = flatten_by_shape(13);
  b.input("x", DType::float32, {0, 3, 4});
  b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "y").text() == "float[N,12]");
}

TEST_CASE("a declared shape is kept when inference says otherwise, and fills only unknown dims", "[infer]") {
  GraphBuilder b(13);
  b.input("x", DType::float32, {2, 3});
  b.node("Relu", {"x"}, {"r"});
  b.node("Relu", {"r"}, {"q"});
  b.output("q");
  auto* vi = b.graph().add_value_info();
  vi->set_name("r");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(5);
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "r").text() == "float[5,3]");
}

TEST_CASE("an op without a rule, or a node that makes no sense, leaves its outputs unknown", "[infer]") {
  GraphBuilder b(13);
  b.input("x", DType::float32, {2, 3});
  b.node("NoSuchOp", {"x"}, {"a"});
  set_attr(b.node("Flatten", {"x"}, {"f"}), "axis", int64_t{7});
  b.node("Relu", {"a"}, {"r"});
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "a").text() == "?[rank ?]");
  CHECK_FALSE(value_of(s, b.model(), "f").has_rank());
  CHECK(value_of(s, b.model(), "r").text() == "?[rank ?]");
}

TEST_CASE("legacy broadcast below opset 7 gives the first input's shape, from a Reshape to a computed shape", "[infer]") {
  GraphBuilder b(6);
  b.input("x", DType::float32, {2, 3, 4});
  b.input("bias", DType::float32, {12});
  b.initializer("zero", int64s({0}));
  b.initializer("minus_one", int64s({-1}));
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  set_attr(b.node("Concat", {"n", "minus_one"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  set_attr(b.node("Add", {"y", "bias"}, {"z"}), "broadcast", int64_t{1});
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "z").text() == "float[2,12]");
}

TEST_CASE("ONNX's inference and bnorm's merged: Split-18 and Pad-18 outputs get their shapes in value_info", "[infer]") {
  GraphBuilder b(18);
  b.input("x", DType::float32, {5, 3, 4});
  b.initializer("pads", int64s({1, 2, 0, 3}));
  b.initializer("axes", int64s({-1, 0}));
  set_attr(b.node("Split", {"x"}, {"a", "b"}), "num_outputs", int64_t{2});
  b.node("Pad", {"a", "pads", "", "axes"}, {"y"});
  b.output("y");
  const onnx::ModelProto m = with_all_inferred_shapes(b.model().proto);
  // ONNX 1.12 reads Split-18 as Split-13, which cannot split 5 in 2: its
  // inference stops; bnorm's: num_outputs = 2 over 5 is 3 and 2.
  CHECK(text_of(m, "a") == "float[3,3,4]");
  CHECK(text_of(m, "b") == "float[2,3,4]");
  CHECK(text_of(m, "y") == "float[8,3,5]");
}

TEST_CASE("LinearAttention-27: output [B, T, Hq*dv] of query's type, present_state [B, Hkv, dk, dv] of past_state's",
          "[infer][linear_attention]") {
  for (const bool past : {false, true}) {
    GraphBuilder b(27);
    b.input("q", DType::float32, {0, 5, 8});  // 4 query heads of 2
    b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
        "N");
    b.input("k", DType::float32, {0, 5, 4});
    b.input("v", DType::float32, {0, 5, 6});  // 2 value heads of 3
    b.input("state", DType::float16, {1, 2, 2, 3});
    auto& n = b.node("LinearAttention", {"q", "k", "v", past ? "state" : ""}, {"y", "present"});
    set_attr(n, "q_num_heads", int64_t{4});
    set_attr(n, "kv_num_heads", int64_t{2});
    const ModelShapes s = infer_model_shapes(b.model().proto);
    CHECK(value_of(s, b.model(), "y").text() == "float[N,5,12]");
    CHECK(value_of(s, b.model(), "present").text() == (past ? "float16[N,2,2,3]" : "float[N,2,2,3]"));
  }
}

TEST_CASE("CausalConvWithState-27: output of the input's shape, present_state [B, C, k - 1]",
          "[infer][causal_conv_with_state]") {
  GraphBuilder b(27);
  b.input("x", DType::float16, {2, 4, 0});
  b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_param(
      "L");
  b.input("w", DType::float16, {4, 1, 3});
  b.input("w1", DType::float16, {4, 1, 1});
  b.node("CausalConvWithState", {"x", "w"}, {"y", "present"});
  b.node("CausalConvWithState", {"x", "w1"}, {"y1", "present1"});
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "y").text() == "float16[2,4,L]");
  CHECK(value_of(s, b.model(), "present").text() == "float16[2,4,2]");
  CHECK(value_of(s, b.model(), "present1").text() == "float16[2,4,0]");
}

TEST_CASE("ai.onnx.preview.FlexAttention gives Y (B, Hq, L, Ev) of Q's type, other preview ops stay unknown",
          "[infer]") {
  GraphBuilder b(26);
  b.input("q", DType::float16, {2, 4, 3, 8});
  b.input("k", DType::float16, {2, 2, 5, 8});
  b.input("v", DType::float16, {2, 2, 5, 6});
  b.node("FlexAttention", {"q", "k", "v"}, {"y"}, "flex").set_domain("ai.onnx.preview");
  b.node("NoSuchOp", {"q"}, {"z"}, "other").set_domain("ai.onnx.preview");
  b.output("y");
  Model m = b.model();
  auto* preview = m.proto.add_opset_import();
  preview->set_domain("ai.onnx.preview");
  preview->set_version(1);
  const ModelShapes s = infer_model_shapes(m.proto);
  CHECK(value_of(s, m, "y").text() == "float16[2,4,3,6]");
  CHECK(value_of(s, m, "z").text() == "?[rank ?]");
}

TEST_CASE("BitCast-26 gives `to`'s type with the input's shape", "[infer]") {
  GraphBuilder b(26);
  b.input("x", DType::float32, {2, 3});
  auto& n = b.node("BitCast", {"x"}, {"y"});
  auto* a = n.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(6);  // int32
  const ModelShapes s = infer_model_shapes(b.model().proto);
  CHECK(value_of(s, b.model(), "y").text() == "int32[2,3]");
}
