// Whole generated networks written at opset 21, as today's exporters write
// them, go down to 13 and 11 and back up to 21, each model on the way
// compared with the original through the evaluator (through(): ONNX's
// checker at <= 17, bnorm's schema check above): a ResNet-style CNN and a
// transformer-style encoder block (LayerNormalization, attention with
// Reshape/Transpose/Softmax, Gelu). Going back up with --fuse-norms brings
// the LayerNormalizations back.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/test_graph.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

Model at(GraphBuilder& b, int64_t opset) {
  Model m = b.model();
  m.proto.set_ir_version(required_ir_version(opset));
  m.proto.mutable_graph()->set_name("net");
  return m;
}

// conv(3x3, pads 1) -> BatchNormalization-15 -> Relu -> conv -> BN -> Add(x) -> Relu,
// twice, then GlobalAveragePool -> Flatten -> Gemm.
Model resnet_21() {
  GraphBuilder b(21);
  const int64_t c = 8;
  b.input("x", DType::float32, {2, c, 10, 10});
  uint32_t seed = 1;
  auto conv_bn = [&](const std::string& in, const std::string& name) {
    b.initializer(name + "_w", random_tensor(DType::float32, {c, c, 3, 3}, seed++));
    auto& conv = b.node("Conv", {in, name + "_w"}, {name + "_c"}, name + "_conv");
    set_ints(conv, "pads", {1, 1, 1, 1});
    set_ints(conv, "kernel_shape", {3, 3});
    for (const char* p : {"_s", "_b", "_m"}) b.initializer(name + p, random_tensor(DType::float32, {c}, seed++));
    Tensor var = random_tensor(DType::float32, {c}, seed++);
    for (int64_t i = 0; i < c; ++i) var.data<float>()[i] = 0.5f + std::fabs(var.data<float>()[i]);
    b.initializer(name + "_v", var);
    b.node("BatchNormalization", {name + "_c", name + "_s", name + "_b", name + "_m", name + "_v"}, {name + "_bn"},
           name + "_bn");
    return name + "_bn";
  };
  std::string x = "x";
  for (int block = 0; block < 2; ++block) {
    const std::string p = "b" + std::to_string(block);
    const std::string h = conv_bn(x, p + "a");
    b.node("Relu", {h}, {p + "_r1"}, p + "_relu1");
    const std::string y = conv_bn(p + "_r1", p + "b");
    b.node("Add", {y, x}, {p + "_sum"}, p + "_add");
    b.node("Relu", {p + "_sum"}, {p + "_out"}, p + "_relu2");
    x = p + "_out";
  }
  b.node("GlobalAveragePool", {x}, {"pool"}, "pool");
  b.node("Flatten", {"pool"}, {"flat"}, "flatten");
  b.initializer("fc_w", random_tensor(DType::float32, {5, c}, 90));
  b.initializer("fc_b", random_tensor(DType::float32, {5}, 91));
  set_attr(b.node("Gemm", {"flat", "fc_w", "fc_b"}, {"logits"}, "fc"), "transB", int64_t{1});
  Model m = at(b, 21);
  add_output(m.proto.mutable_graph()[0], "logits", DType::float32, {2, 5});
  return m;
}

// One encoder block on [batch 1, tokens 6, width 8], 2 heads of 4:
// LayerNormalization -> Q, K, V MatMuls -> heads by Reshape/Transpose ->
// Softmax(Q K^T / 2) V -> back to [1, 6, 8] -> MatMul -> residual Add ->
// LayerNormalization -> MatMul -> Gelu -> MatMul -> residual Add.
Model transformer_21() {
  GraphBuilder b(21);
  const int64_t t = 6, w = 8, heads = 2, d = 4;
  b.input("x", DType::float32, {1, t, w});
  uint32_t seed = 10;
  auto layer_norm = [&](const std::string& in, const std::string& name) {
    b.initializer(name + "_g", random_tensor(DType::float32, {w}, seed++));
    b.initializer(name + "_b", random_tensor(DType::float32, {w}, seed++));
    auto& n = b.node("LayerNormalization", {in, name + "_g", name + "_b"}, {name}, name);
    set_attr(n, "axis", int64_t{-1});
    set_attr(n, "epsilon", 1e-5f);
    return name;
  };
  auto linear = [&](const std::string& in, const std::string& name, int64_t k, int64_t n) {
    b.initializer(name + "_w", random_tensor(DType::float32, {k, n}, seed++));
    b.node("MatMul", {in, name + "_w"}, {name}, name);
    return name;
  };
  b.initializer("heads_shape", i64({4}, {1, t, heads, d}));
  b.initializer("merged_shape", i64({3}, {1, t, w}));
  b.initializer("scale", f32({}, {2.0}));  // sqrt(d)
  const std::string ln1 = layer_norm("x", "ln1");
  auto split_heads = [&](const std::string& in, const std::string& name, const std::vector<int64_t>& perm) {
    b.node("Reshape", {in, "heads_shape"}, {name + "_r"}, name + "_reshape");
    set_ints(b.node("Transpose", {name + "_r"}, {name + "_t"}, name + "_transpose"), "perm", perm);
    return name + "_t";
  };
  const std::string q = split_heads(linear(ln1, "q", w, w), "qh", {0, 2, 1, 3});
  const std::string k = split_heads(linear(ln1, "k", w, w), "kh", {0, 2, 3, 1});
  const std::string v = split_heads(linear(ln1, "v", w, w), "vh", {0, 2, 1, 3});
  b.node("MatMul", {q, k}, {"scores"}, "scores");
  b.node("Div", {"scores", "scale"}, {"scaled"}, "scaled");
  set_attr(b.node("Softmax", {"scaled"}, {"probs"}, "softmax"), "axis", int64_t{-1});
  b.node("MatMul", {"probs", v}, {"ctx"}, "ctx");
  set_ints(b.node("Transpose", {"ctx"}, {"ctx_t"}, "ctx_transpose"), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"ctx_t", "merged_shape"}, {"merged"}, "merge");
  const std::string attn = linear("merged", "proj", w, w);
  b.node("Add", {"x", attn}, {"res1"}, "res1");
  const std::string ln2 = layer_norm("res1", "ln2");
  const std::string up = linear(ln2, "fc1", w, 2 * w);
  b.node("Gelu", {up}, {"act"}, "gelu");
  const std::string down = linear("act", "fc2", 2 * w, w);
  b.node("Add", {"res1", down}, {"y"}, "res2");
  Model m = at(b, 21);
  add_output(m.proto.mutable_graph()[0], "y", DType::float32, {1, t, w});
  return m;
}

Model upgraded(const Model& in, int64_t to, bool fuse) {
  Model out = in;
  UpgradeOptions o;
  o.target = to;
  o.fuse_norms = fuse;
  upgrade_model(out, o);
  return out;
}

}  // namespace

TEST_CASE("a ResNet-style CNN written at opset 21 goes down to 13 and 11 and back to 21", "[upgrade][networks]") {
  const Model m = resnet_21();
  const Model back = through(m, {13, 11, 13, 21});
  CHECK(count_op(back, "BatchNormalization") == 4);
  CHECK(first_node(back, "Gemm").op_type() == "Gemm");
}

TEST_CASE("a transformer-style block written at opset 21 goes down to 13 and 11 and back, norms fused again",
          "[upgrade][networks]") {
  const Model m = transformer_21();
  const Model low = through(m, {13, 11});
  CHECK(count_op(low, "LayerNormalization") == 0);  // lowered below 17
  CHECK(count_op(low, "Gelu") == 0);                // lowered below 20
  CHECK(count_op(low, "Erf") == 1);
  const Model plain = through(low, {13, 21});
  expect_same_outputs(m, plain);
  CHECK(count_op(plain, "LayerNormalization") == 0);  // without --fuse-norms they stay decomposed
  const Model fused = upgraded(low, 21, true);
  check_model_full(fused.proto);
  CHECK(count_op(fused, "LayerNormalization") == 2);
  expect_same_outputs(m, fused);
}
