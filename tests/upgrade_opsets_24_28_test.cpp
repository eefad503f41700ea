// bnorm upgrade across the schema changes of opsets 24..28 (issue 29): every
// op version those opsets introduce, taken down to 23 (and 17 where the op
// exists there) and back up. The expected numbers are the original model's
// evaluation (part 1 checks eval's Swish, SwiGLU, Celu-28, TopK-24,
// Range-27 and Cast-25 against ONNX's node-test data); a converted model
// must give the same bits. Refusals are checked by their message. Whole
// models and ONNX's node tests: upgrade_opsets_24_28_models_test.cpp;
// Attention: upgrade_transformer_test.cpp; CausalConvWithState and
// LinearAttention: upgrade_sequence_ops_27_test.cpp.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>

#include "support/opsets_24_28_support.h"

using namespace bnorm;
using namespace bnorm::test;

TEST_CASE("Swish-24 below 24 is Mul, Sigmoid, Mul with the same bits, float16 and bfloat16 in float between Casts",
          "[upgrade][opset28]") {
  const std::vector<int64_t> dims{2, 3, 5};
  for (const DType t : kFloats) {
    for (const float alpha : {1.0f, 1.702f}) {
      INFO(dtype_name(t) << " alpha " << alpha);
      Model m = unary(24, "Swish", t, dims);
      if (alpha != 1.0f) set_attr(*g(m).mutable_node(0), "alpha", alpha);
      const auto in = spread_inputs(m, t, dims);
      const Model at23 = converted(m, 23);
      CHECK_FALSE(has_op(at23, "Swish"));
      CHECK(count_op(at23, "Sigmoid") == 1);
      CHECK(count_op(at23, "Mul") == (alpha == 1.0f ? 1 : 2));
      CHECK(count_op(at23, "Cast") == (t == DType::float16 || t == DType::bfloat16 ? 2 : 0));
      down_and_back(m, {23, 21, 17}, in);
    }
  }
}

TEST_CASE("Swish's evaluation, which the lowering is compared with, is x * sigmoid(alpha x)", "[upgrade][opset28]") {
  Model m = unary(24, "Swish", DType::float64, {4});
  set_attr(*g(m).mutable_node(0), "alpha", 2.0f);
  Tensor x = Tensor::from_f64(DType::float64, {4}, {0.0, 1.0, -3.0, 20.0});
  x.name = "x";
  const auto y = evaluated(m, {{"x", x}}).at("y");
  const double* v = y.data<double>();
  const double want[] = {0.0, 1.0 / (1.0 + std::exp(-2.0)), -3.0 / (1.0 + std::exp(6.0)), 20.0 / (1.0 + std::exp(-40.0))};
  for (int i = 0; i < 4; ++i) CHECK(v[i] == Approx(want[i]).epsilon(1e-14));
}

TEST_CASE("SwiGLU-28 below 28 is Swish(A) * B written as Mul, Sigmoid, Mul, Mul with the same bits", "[upgrade][opset28]") {
  const std::vector<int64_t> dims{2, 8};
  for (const DType t : kFloats) {
    for (const float alpha : {1.0f, 0.5f}) {
      INFO(dtype_name(t) << " alpha " << alpha);
      Model m = net(28);
      input(m, "x", t, dims);
      input(m, "b", t, dims);
      auto& n = node(m, "SwiGLU", {"x", "b"}, {"y"}, "glu");
      if (alpha != 1.0f) set_attr(n, "alpha", alpha);
      add_output(g(m), "y", t, dims);
      const auto in = spread_inputs(m, t, dims);
      const Model at27 = converted(m, 27);
      CHECK_FALSE(has_op(at27, "SwiGLU"));
      CHECK(count_op(at27, "Sigmoid") == 1);
      CHECK(count_op(at27, "Mul") == (alpha == 1.0f ? 2 : 3));
      CHECK(count_op(at27, "Cast") == (t == DType::float16 || t == DType::bfloat16 ? 3 : 0));
      down_and_back(m, {27, 24, 23, 17}, in);
    }
  }
}

TEST_CASE("SwiGLU with inputs of different known shapes is refused: it does not broadcast, Mul does", "[upgrade][opset28]") {
  Model m = net(28);
  input(m, "x", DType::float32, {2, 8});
  input(m, "b", DType::float32, {1, 8});
  node(m, "SwiGLU", {"x", "b"}, {"y"}, "glu");
  add_output(g(m), "y", DType::float32, {2, 8});
  const std::string e = upgrade_error_of(m, 23);
  INFO(e);
  CHECK(e.find("'glu'") != std::string::npos);
  CHECK(e.find("does not broadcast") != std::string::npos);
}

TEST_CASE("Celu-28 is Celu-12 for float, bfloat16 and float16 go through float between Casts (the same bits), "
          "double is refused below 28 with why", "[upgrade][opset28]") {
  const std::vector<int64_t> dims{3, 7};
  const Model m = unary(28, "Celu", DType::float32, dims);
  down_and_back(m, {23, 17, 12}, spread_inputs(m, DType::float32, dims));
  CHECK(upgrade_error_of(m, 11).find("Celu") != std::string::npos);
  const Model bf = unary(28, "Celu", DType::bfloat16, dims);
  const Model bf23 = converted(bf, 23);
  CHECK(count_op(bf23, "Cast") == 2);
  down_and_back(bf, {23, 17, 13}, spread_inputs(bf, DType::bfloat16, dims));
  const Model half = unary(28, "Celu", DType::float16, dims);
  const Model half23 = converted(half, 23);
  CHECK(count_op(half23, "Cast") == 2);
  down_and_back(half, {23, 17, 12}, spread_inputs(half, DType::float16, dims));
  const std::string e = upgrade_error_of(unary(28, "Celu", DType::float64, dims), 23);
  INFO(e);
  CHECK(e.find("'n'") != std::string::npos);
  CHECK(e.find("double Celu has no exact form") != std::string::npos);
}

TEST_CASE("TopK-24 and Range-27 are type-only: the same bits at 23 and 17, bfloat16 TopK and float16 Range refused",
          "[upgrade][opset28]") {
  {
    Model m = net(24);
    input(m, "x", DType::float32, {3, 6});
    constant(m, "k", DType::int64, {1}, 4.0);
    node(m, "TopK", {"x", "k"}, {"v", "i"}, "top");
    add_output(g(m), "v", DType::float32, {3, 4});
    add_output(g(m), "i", DType::int64, {3, 4});
    down_and_back(m, {23, 17, 11}, spread_inputs(m, DType::float32, {3, 6}));
    Model bf = net(24);
    input(bf, "x", DType::bfloat16, {3, 6});
    constant(bf, "k", DType::int64, {1}, 4.0);
    node(bf, "TopK", {"x", "k"}, {"v", "i"}, "top");
    add_output(g(bf), "v", DType::bfloat16, {3, 4});
    add_output(g(bf), "i", DType::int64, {3, 4});
    const std::string e = upgrade_error_of(bf, 23);
    INFO(e);
    CHECK(e.find("'top'") != std::string::npos);
    CHECK(e.find("bfloat16") != std::string::npos);
  }
  for (const DType t : {DType::float32, DType::int32, DType::float16}) {
    INFO(dtype_name(t));
    Model m = net(27);
    for (const char* v : {"start", "limit", "delta"}) {
      input(m, v, t, {});
      g(m).mutable_input(g(m).input_size() - 1)->mutable_type()->mutable_tensor_type()->mutable_shape();  // a scalar
    }
    auto& n = node(m, "Range", {"start", "limit", "delta"}, {"y"}, "range");
    set_attr(n, "stash_type", int64_t{1});
    add_output(g(m), "y", t, {-1});
    g(m).mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("n");
    std::map<std::string, Tensor> in;
    const double values[] = {3.0, 40.0, 3.0};
    int k = 0;
    for (const char* v : {"start", "limit", "delta"}) {
      in[v] = Tensor::from_f64(t, {}, {values[k++]});
      in[v].name = v;
    }
    if (t == DType::float16) {
      const std::string e = upgrade_error_of(m, 23);
      INFO(e);
      CHECK(e.find("'range'") != std::string::npos);
      CHECK(e.find("float16") != std::string::npos);
      continue;
    }
    const Model low = converted(m, 23);
    CHECK_FALSE(has_attr(first_node(low, "Range"), "stash_type"));
    down_and_back(m, {23, 17, 11}, in);
  }
}

TEST_CASE("Cast-24/25 go down unchanged when their types exist at the target, round_mode is dropped", "[upgrade][opset28]") {
  Model m = net(25);
  input(m, "x", DType::float32, {2, 5});
  auto& n = node(m, "Cast", {"x"}, {"y"}, "cast");
  set_attr(n, "to", int64_t{6});
  set_attr(n, "round_mode", "up");
  add_output(g(m), "y", DType::int32, {2, 5});
  const Model low = converted(m, 23);
  CHECK_FALSE(has_attr(first_node(low, "Cast"), "round_mode"));
  down_and_back(m, {23, 17}, spread_inputs(m, DType::float32, {2, 5}));
}

TEST_CASE("CumProd and BitCast are refused below their opset, each with why",
          "[upgrade][opset28]") {
  struct Case {
    const char* op;
    int64_t opset;
    std::vector<std::string> inputs;
    const char* why;
  };
  const Case cases[] = {
      {"CumProd", 26, {"x", "axis"}, "no exact form"},
      {"BitCast", 26, {"x"}, "reinterprets bits"},
  };
  for (const auto& c : cases) {
    INFO(c.op);
    Model m = net(c.opset);
    input(m, "x", DType::float32, {1, 2, 4});
    constant(m, "axis", DType::int64, {}, 1.0);
    auto& n = node(m, c.op, c.inputs, {"y"}, "op");
    if (std::string(c.op) == "BitCast") set_attr(n, "to", int64_t{6});
    add_output(g(m), "y", DType::float32, {1, 2, 4});
    const std::string e = upgrade_error_of(m, c.opset - 1);
    INFO(e);
    CHECK(e.find("'op'") != std::string::npos);
    CHECK(e.find(fmt::format("op '{}' does not exist at opset {}", c.op, c.opset - 1)) != std::string::npos);
    CHECK(e.find(c.why) != std::string::npos);
  }
}

TEST_CASE("a float model at 17 goes up to 28 and back with the same bits, the default target stays 15",
          "[upgrade][opset28]") {
  Model m = net(17);
  input(m, "x", DType::float32, {2, 6});
  node(m, "Celu", {"x"}, {"c"}, "celu");
  node(m, "Relu", {"c"}, {"r"}, "relu");
  node(m, "Flatten", {"r"}, {"y"}, "flat");
  add_output(g(m), "y", DType::float32, {2, 6});
  const auto in = spread_inputs(m, DType::float32, {2, 6});
  const Model at28 = converted(m, 28);
  CHECK(default_opset(at28.proto) == 28);
  CHECK(at28.proto.ir_version() == 13);
  expect_same_bits(m, at28, in);
  expect_same_bits(m, converted(at28, 17), in);
  CHECK(UpgradeOptions{}.target == 15);
}

TEST_CASE("a transformer MLP block at 28 (RMSNormalization, SwiGLU) goes to 23, 21 and 17 with the same numbers",
          "[upgrade][opset28]") {
  // x [2, 4, 8] -> RMSNormalization -> gate/up MatMuls [8, 16] -> SwiGLU -> down MatMul [16, 8] -> + x
  Model m = net(28);
  input(m, "x", DType::float32, {2, 4, 8});
  constant(m, "norm_scale", DType::float32, {8}, 0.75);
  constant(m, "w_gate", DType::float32, {8, 16}, 0.05);
  constant(m, "w_up", DType::float32, {8, 16}, -0.03);
  constant(m, "w_down", DType::float32, {16, 8}, 0.02);
  node(m, "RMSNormalization", {"x", "norm_scale"}, {"h"}, "norm");
  node(m, "MatMul", {"h", "w_gate"}, {"gate"}, "gate_proj");
  node(m, "MatMul", {"h", "w_up"}, {"up"}, "up_proj");
  node(m, "SwiGLU", {"gate", "up"}, {"act"}, "act");
  node(m, "MatMul", {"act", "w_down"}, {"down"}, "down_proj");
  node(m, "Add", {"x", "down"}, {"y"}, "residual");
  add_output(g(m), "y", DType::float32, {2, 4, 8});
  // 23: RMSNormalization stays, SwiGLU is lowered exactly; 21 and 17: RMSNormalization is lowered too (rounded
  // differently: compared within the documented tolerance, as its own lowering tests are).
  const auto in = spread_inputs(m, DType::float32, {2, 4, 8});
  const Model at23 = converted(m, 23);
  CHECK(has_op(at23, "RMSNormalization"));
  CHECK_FALSE(has_op(at23, "SwiGLU"));
  expect_same_bits(m, at23, in);
  for (const int64_t to : {21, 17}) {
    INFO("to " << to);
    const Model low = converted(m, to);
    CHECK_FALSE(has_op(low, "RMSNormalization"));
    expect_same_outputs(m, low);
  }
}
