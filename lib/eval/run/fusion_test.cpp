// The executor's fusions: a normalization with its activation, a Conv with the
// BatchNormalization, residual Add and activation after it; each bitwise the nodes run apart.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <random>

#include "core/error.h"
#include "support/error_of.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::Tensor;
using bnorm::test::error_of;
using bnorm::test::GraphBuilder;
using bnorm::test::random_tensor;
using bnorm::test::set_attr;

struct ActCase {
  const char* op;
  float alpha;  // 0: default
};

// norm (BN inference, BN training, IN) -> activation, at opset 15.
GraphBuilder norm_then_activation(const std::string& norm, const ActCase& act, DType t, bool y_is_output) {
  GraphBuilder b(15);
  const std::vector<int64_t> dims{2, 3, 4, 5};
  b.input("X", t, dims);
  b.initializer("scale", random_tensor(t, {3}, 0.5, 2, 2));
  b.initializer("B", random_tensor(t, {3}, -1, 1, 3));
  b.initializer("mean", random_tensor(t, {3}, -0.5, 0.5, 4));
  b.initializer("var", random_tensor(t, {3}, 0.2, 2, 5));
  if (norm == "IN") {
    b.node("InstanceNormalization", {"X", "scale", "B"}, {"Y"}, "norm");
  } else {
    auto& n = b.node("BatchNormalization", {"X", "scale", "B", "mean", "var"},
                     norm == "BN-train" ? std::vector<std::string>{"Y", "rm", "rv"} : std::vector<std::string>{"Y"},
                     "norm");
    if (norm == "BN-train") set_attr(n, "training_mode", int64_t{1});
  }
  std::vector<std::string> act_inputs{"Y"};
  if (std::string(act.op) == "Clip") {
    b.initializer("lo", Tensor::from_f64(t, {}, {-0.5}));
    b.initializer("hi", Tensor::from_f64(t, {}, {0.75}));
    act_inputs = {"Y", "lo", "hi"};
  }
  auto& a = b.node(act.op, act_inputs, {"Z"}, "act");
  if (act.alpha != 0) set_attr(a, "alpha", act.alpha);
  b.output("Z");
  if (y_is_output) b.output("Y");
  return b;
}

// Output Z of `b` on X = x run with the executor's fusions and with every node apart.
struct FusedAndApart {
  Tensor fused, apart;
  bnorm::EvalStats fused_stats, apart_stats;
};

FusedAndApart fused_and_apart(const GraphBuilder& b, const Tensor& x, const std::map<std::string, Tensor>& more = {}) {
  FusedAndApart r;
  bnorm::EvalOptions fused, apart;
  fused.stats = &r.fused_stats;
  apart.stats = &r.apart_stats;
  apart.fuse_activations = false;
  std::map<std::string, Tensor> in = more;
  in.emplace("X", x);
  r.fused = bnorm::evaluate(b.model(), in, fused).at("Z");
  r.apart = bnorm::evaluate(b.model(), in, apart).at("Z");
  return r;
}

}  // namespace

TEST_CASE("a normalization fused with its activation gives bitwise the unfused float and double results",
          "[eval][fusion]") {
  const ActCase act = GENERATE(ActCase{"Relu", 0}, ActCase{"LeakyRelu", 0.1f}, ActCase{"Elu", 0.5f},
                               ActCase{"Selu", 0}, ActCase{"Celu", 1.5f}, ActCase{"Sigmoid", 0},
                               ActCase{"HardSigmoid", 0}, ActCase{"HardSwish", 0}, ActCase{"Tanh", 0},
                               ActCase{"Softplus", 0}, ActCase{"Softsign", 0}, ActCase{"ThresholdedRelu", 0.2f},
                               ActCase{"Clip", 0});
  const std::string norm = GENERATE("BN", "BN-train", "IN");
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(fmt::format("{} -> {}, {}", norm, act.op, bnorm::dtype_name(t)));
  const GraphBuilder b = norm_then_activation(norm, act, t, false);
  const FusedAndApart r = fused_and_apart(b, random_tensor(t, {2, 3, 4, 5}, -3, 3, 1));
  CHECK(r.fused_stats.fused == 1);
  CHECK(r.fused_stats.nodes_run == 1);
  CHECK(r.apart_stats.fused == 0);
  CHECK(r.apart_stats.nodes_run == 2);
  REQUIRE(r.fused.dims == r.apart.dims);
  CHECK(r.fused.bytes == r.apart.bytes);
}

TEST_CASE("a normalization output that is also a graph output is not fused", "[eval][fusion]") {
  const GraphBuilder b = norm_then_activation("BN", {"Relu", 0}, DType::float32, true);
  bnorm::EvalStats stats;
  bnorm::EvalOptions options;
  options.stats = &stats;
  const auto out = bnorm::evaluate(b.model(), {{"X", random_tensor(DType::float32, {2, 3, 4, 5}, -1, 1, 9)}}, options);
  CHECK(stats.fused == 0);
  CHECK(out.count("Y") == 1);
  CHECK(out.count("Z") == 1);
}

namespace {

struct ConvCase {
  const char* name;
  std::vector<int64_t> w;  // W's dims: [M, C/group, kH, kW]
  int64_t group;
  int64_t stride;
  int64_t pad;
};

// How a residual Add follows: none, Add(y, R), Add(R, y), or R of shape
// [1, M, 1, 1] (broadcast: not absorbed, the Add runs as a node).
enum class Residual { none, left, right, broadcast };

// Y's dims for X [2, 4, 9, 7].
std::vector<int64_t> conv_out(const ConvCase& cc) {
  return {2, cc.w[0], (9 + 2 * cc.pad - cc.w[2]) / cc.stride + 1, (7 + 2 * cc.pad - cc.w[3]) / cc.stride + 1};
}

// How a SiLU written out follows: none, Mul(y, Sigmoid(y)), Mul(Sigmoid(y), y).
enum class Silu { none, y_first, sigmoid_first };

// X [2, 4, 9, 7] -> Conv (with bias) -> [BatchNormalization] -> [Add R] -> [activation] -> [SiLU] -> Z.
GraphBuilder conv_then(const ConvCase& cc, bool bn, const ActCase* act, DType t, Residual res = Residual::none,
                       Silu silu = Silu::none) {
  GraphBuilder b(15);
  b.input("X", t, {2, 4, 9, 7});
  const int64_t m = cc.w[0];
  b.initializer("W", random_tensor(t, cc.w, -1, 1, 11));
  b.initializer("Bc", random_tensor(t, {m}, -1, 1, 12));
  auto& conv = b.node("Conv", {"X", "W", "Bc"}, {"Y"}, "conv");
  set_attr(conv, "group", cc.group);
  bnorm::test::set_ints(conv, "strides", {cc.stride, cc.stride});
  bnorm::test::set_ints(conv, "pads", std::vector<int64_t>(4, cc.pad));
  std::string last = "Y";
  if (bn) {
    b.initializer("scale", random_tensor(t, {m}, 0.5, 2, 2));
    b.initializer("B", random_tensor(t, {m}, -1, 1, 3));
    b.initializer("mean", random_tensor(t, {m}, -0.5, 0.5, 4));
    b.initializer("var", random_tensor(t, {m}, 0.2, 2, 5));
    b.node("BatchNormalization", {"Y", "scale", "B", "mean", "var"}, {"N"}, "norm");
    last = "N";
  }
  if (res != Residual::none) {
    b.input("R", t, res == Residual::broadcast ? std::vector<int64_t>{1, m, 1, 1} : conv_out(cc));
    b.node("Add", res == Residual::right ? std::vector<std::string>{"R", last} : std::vector<std::string>{last, "R"},
           {"S"}, "add");
    last = "S";
  }
  if (act) {
    std::vector<std::string> in{last};
    if (std::string(act->op) == "Clip") {
      b.initializer("lo", Tensor::from_f64(t, {}, {-0.5}));
      b.initializer("hi", Tensor::from_f64(t, {}, {0.75}));
      in = {last, "lo", "hi"};
    }
    auto& a = b.node(act->op, in, {"A"}, "act");
    if (act->alpha != 0) set_attr(a, "alpha", act->alpha);
    last = "A";
  }
  if (silu != Silu::none) {
    b.node("Sigmoid", {last}, {"Sg"}, "sigmoid");
    b.node("Mul", silu == Silu::y_first ? std::vector<std::string>{last, "Sg"} : std::vector<std::string>{"Sg", last},
           {"Sw"}, "mul");
    last = "Sw";
  }
  b.node("Identity", {last}, {"Z"});
  b.output("Z");
  return b;
}

}  // namespace

TEST_CASE("a Conv applying the BatchNormalization and activation after it gives bitwise the nodes run apart",
          "[eval][fusion][conv]") {
  // im2col + gemm, strided and padded; 1x1 (X itself as gemm's B); grouped; depthwise (conv_plane).
  const ConvCase cc = GENERATE(ConvCase{"3x3", {6, 4, 3, 3}, 1, 2, 1}, ConvCase{"1x1", {5, 4, 1, 1}, 1, 1, 0},
                               ConvCase{"grouped", {6, 2, 3, 3}, 2, 1, 1}, ConvCase{"depthwise", {4, 1, 3, 3}, 4, 1, 1});
  const ActCase act = GENERATE(ActCase{"", 0}, ActCase{"Relu", 0}, ActCase{"Clip", 0}, ActCase{"Sigmoid", 0},
                               ActCase{"LeakyRelu", 0.1f});
  const bool bn = GENERATE(false, true);
  const DType t = GENERATE(DType::float32, DType::float64);
  const bool has_act = std::string(act.op) != "";
  if (!bn && !has_act) return;
  INFO(fmt::format("{}{}{}, {}", cc.name, bn ? " -> BN" : "", has_act ? std::string(" -> ") + act.op : "",
                   bnorm::dtype_name(t)));
  const GraphBuilder b = conv_then(cc, bn, has_act ? &act : nullptr, t);
  const FusedAndApart r = fused_and_apart(b, random_tensor(t, {2, 4, 9, 7}, -3, 3, 1));
  CHECK(r.fused_stats.conv_fused == 1);
  CHECK(r.fused_stats.nodes_run == 2);  // the Conv (with what it applies) and the Identity
  CHECK(r.apart_stats.conv_fused == 0);
  CHECK(r.apart_stats.nodes_run == 2 + bn + has_act);
  REQUIRE(r.fused.dims == r.apart.dims);
  CHECK(r.fused.bytes == r.apart.bytes);
}

TEST_CASE("a Conv runs alone where the node after it would not run as its fused form", "[eval][fusion][conv]") {
  const ActCase relu{"Relu", 0};
  const ConvCase cc{"3x3", {6, 4, 3, 3}, 1, 1, 1};
  bnorm::EvalStats stats;
  bnorm::EvalOptions options;
  options.stats = &stats;
  SECTION("float16: the activation would act before the rounding to float16") {
    const GraphBuilder b = conv_then(cc, false, &relu, DType::float16);
    bnorm::evaluate(b.model(), {{"X", random_tensor(DType::float16, {2, 4, 9, 7}, -1, 1, 3)}}, options);
    CHECK(stats.conv_fused == 0);
  }
  SECTION("BatchNormalization in training mode") {
    GraphBuilder b = conv_then(cc, true, nullptr, DType::float32);
    for (auto& n : *b.graph().mutable_node()) {
      if (n.op_type() == "BatchNormalization") set_attr(n, "training_mode", int64_t{1});
    }
    bnorm::evaluate(b.model(), {{"X", random_tensor(DType::float32, {2, 4, 9, 7}, -1, 1, 3)}}, options);
    CHECK(stats.conv_fused == 0);
  }
  SECTION("parameters of the wrong shape: the BatchNormalization node reports it") {
    GraphBuilder b = conv_then(cc, true, nullptr, DType::float32);
    for (auto& init : *b.graph().mutable_initializer()) {
      if (init.name() == "var") bnorm::encode_tensor(Tensor::from_f64(DType::float32, {3}, {1, 1, 1}), &init);
    }
    const Error e = error_of([&] {
      bnorm::evaluate(b.model(), {{"X", random_tensor(DType::float32, {2, 4, 9, 7}, -1, 1, 3)}}, options);
    });
    CHECK_THAT(e.message(), Catch::Contains("input_var"));
    CHECK_THAT(e.message(), Catch::Contains("norm"));
  }
  SECTION("a parameter that does not decode: the BatchNormalization node reports it") {
    GraphBuilder b = conv_then(cc, true, nullptr, DType::float32);
    for (auto& init : *b.graph().mutable_initializer()) {
      if (init.name() == "var") init.set_dims(0, 3);  // 6 floats of raw data for 3
    }
    const Error e = error_of([&] {
      bnorm::evaluate(b.model(), {{"X", random_tensor(DType::float32, {2, 4, 9, 7}, -1, 1, 3)}}, options);
    });
    CHECK_THAT(e.message(), Catch::Contains("'var'"));
    CHECK_THAT(e.message(), Catch::Contains("norm"));
  }
  SECTION("an observer sees the Conv's own output") {
    const GraphBuilder b = conv_then(cc, true, &relu, DType::float32);
    std::vector<std::string> seen;
    options.on_value = [&](const std::string& name, const std::string&, const Tensor&) { seen.push_back(name); };
    bnorm::evaluate(b.model(), {{"X", random_tensor(DType::float32, {2, 4, 9, 7}, -1, 1, 3)}}, options);
    CHECK(stats.conv_fused == 0);
    CHECK(seen == std::vector<std::string>{"Y", "N", "A", "Z"});
  }
}

TEST_CASE("a Conv adding the residual after it gives bitwise the nodes run apart", "[eval][fusion][conv]") {
  const ConvCase cc = GENERATE(ConvCase{"3x3", {6, 4, 3, 3}, 1, 2, 1}, ConvCase{"depthwise", {4, 1, 3, 3}, 4, 1, 1});
  const Residual res = GENERATE(Residual::left, Residual::right, Residual::broadcast);
  const bool bn = GENERATE(false, true);
  const bool relu = GENERATE(false, true);
  const DType t = GENERATE(DType::float32, DType::float64);
  const ActCase act{"Relu", 0};
  INFO(fmt::format("{}{} + residual {}{}, {}", cc.name, bn ? " -> BN" : "", static_cast<int>(res),
                   relu ? " -> Relu" : "", bnorm::dtype_name(t)));
  const GraphBuilder b = conv_then(cc, bn, relu ? &act : nullptr, t, res);
  const std::vector<int64_t> rdims = res == Residual::broadcast ? std::vector<int64_t>{1, cc.w[0], 1, 1} : conv_out(cc);
  const FusedAndApart r =
      fused_and_apart(b, random_tensor(t, {2, 4, 9, 7}, -3, 3, 1), {{"R", random_tensor(t, rdims, -2, 2, 8)}});
  // Absorbed: the BatchNormalization, and the Add and the Relu after it unless the Add broadcasts.
  const bool added = res != Residual::broadcast;
  CHECK(r.fused_stats.nodes_run == 2 + (!added) + (!added && relu));
  CHECK(r.apart_stats.nodes_run == 3 + bn + relu);
  REQUIRE(r.fused.dims == r.apart.dims);
  CHECK(r.fused.bytes == r.apart.bytes);
}

TEST_CASE("a Conv applying a SiLU written out (Sigmoid, Mul) after it gives bitwise the nodes run apart",
          "[eval][fusion][conv]") {
  const ConvCase cc = GENERATE(ConvCase{"3x3", {6, 4, 3, 3}, 1, 2, 1}, ConvCase{"1x1", {5, 4, 1, 1}, 1, 1, 0},
                               ConvCase{"grouped", {6, 2, 3, 3}, 2, 1, 1}, ConvCase{"depthwise", {4, 1, 3, 3}, 4, 1, 1});
  const bool bn = GENERATE(false, true);
  const Silu order = GENERATE(Silu::y_first, Silu::sigmoid_first);
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(fmt::format("{}{} -> SiLU ({}), {}", cc.name, bn ? " -> BN" : "", order == Silu::y_first ? "y, s" : "s, y",
                   bnorm::dtype_name(t)));
  const GraphBuilder b = conv_then(cc, bn, nullptr, t, Residual::none, order);
  const FusedAndApart r = fused_and_apart(b, random_tensor(t, {2, 4, 9, 7}, -6, 6, 1));
  CHECK(r.fused_stats.conv_fused == 1);
  CHECK(r.fused_stats.nodes_run == 2);  // the Conv (with what it applies) and the Identity
  CHECK(r.apart_stats.nodes_run == 4 + bn);
  REQUIRE(r.fused.dims == r.apart.dims);
  CHECK(r.fused.bytes == r.apart.bytes);
}

TEST_CASE("a SiLU whose values are read elsewhere runs as nodes of its own", "[eval][fusion][conv]") {
  const ConvCase cc{"3x3", {6, 4, 3, 3}, 1, 1, 1};
  const Tensor x = random_tensor(DType::float32, {2, 4, 9, 7}, -3, 3, 2);
  SECTION("the Sigmoid's output is also a graph output") {
    GraphBuilder b = conv_then(cc, false, nullptr, DType::float32, Residual::none, Silu::y_first);
    b.output("Sg");
    const FusedAndApart r = fused_and_apart(b, x);
    CHECK(r.fused_stats.conv_fused == 0);
    CHECK(r.fused.bytes == r.apart.bytes);
  }
  SECTION("the Conv's output is read by a third node") {
    GraphBuilder b = conv_then(cc, false, nullptr, DType::float32, Residual::none, Silu::y_first);
    b.node("Neg", {"Y"}, {"Ny"});
    b.output("Ny");
    const FusedAndApart r = fused_and_apart(b, x);
    CHECK(r.fused_stats.conv_fused == 0);
    CHECK(r.fused.bytes == r.apart.bytes);
  }
  SECTION("a Mul of the Conv's output and another value than its Sigmoid") {
    GraphBuilder b = conv_then(cc, false, nullptr, DType::float32);
    for (auto& n : *b.graph().mutable_node()) {
      if (n.op_type() == "Identity") n.set_input(0, "Sw");
    }
    b.node("Sigmoid", {"Y"}, {"Sg"});
    b.node("Mul", {"Y", "Y"}, {"Sw"});
    b.output("Sg");
    const FusedAndApart r = fused_and_apart(b, x);
    CHECK(r.fused_stats.conv_fused == 0);
    CHECK(r.fused.bytes == r.apart.bytes);
  }
}

TEST_CASE("a Gemm or MatMul applying the activation or SiLU after it gives bitwise the nodes run apart",
          "[eval][fusion][gemm]") {
  const std::string op = GENERATE("Gemm", "MatMul", "MatMul batched");
  const ActCase act = GENERATE(ActCase{"Relu", 0}, ActCase{"Sigmoid", 0}, ActCase{"LeakyRelu", 0.1f},
                               ActCase{"Tanh", 0}, ActCase{"Clip", 0}, ActCase{"SiLU", 0});
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(fmt::format("{} -> {}, {}", op, act.op, bnorm::dtype_name(t)));
  GraphBuilder b(15);
  const bool batched = op == "MatMul batched";
  const std::vector<int64_t> xd = batched ? std::vector<int64_t>{2, 5, 12} : std::vector<int64_t>{5, 12};
  b.input("X", t, xd);
  b.initializer("W", random_tensor(t, batched ? std::vector<int64_t>{2, 12, 7} : std::vector<int64_t>{12, 7}, -1, 1, 21));
  if (op == "Gemm") {
    b.initializer("C", random_tensor(t, {7}, -1, 1, 22));
    auto& gm = b.node("Gemm", {"X", "W", "C"}, {"Y"});
    set_attr(gm, "alpha", 0.75f);
    set_attr(gm, "beta", 1.5f);
  } else {
    b.node("MatMul", {"X", "W"}, {"Y"});
  }
  std::string last = "Y";
  if (std::string(act.op) == "SiLU") {
    b.node("Sigmoid", {"Y"}, {"Sg"});
    b.node("Mul", {"Sg", "Y"}, {"A"});
  } else {
    std::vector<std::string> in{"Y"};
    if (std::string(act.op) == "Clip") {
      b.initializer("lo", Tensor::from_f64(t, {}, {-0.5}));
      b.initializer("hi", Tensor::from_f64(t, {}, {0.75}));
      in = {"Y", "lo", "hi"};
    }
    auto& a = b.node(act.op, in, {"A"});
    if (act.alpha != 0) set_attr(a, "alpha", act.alpha);
  }
  b.node("Identity", {"A"}, {"Z"});
  b.output("Z");
  const FusedAndApart r = fused_and_apart(b, random_tensor(t, xd, -4, 4, 23));
  CHECK(r.fused_stats.product_fused == 1);
  CHECK(r.fused_stats.nodes_run == 2);
  REQUIRE(r.fused.dims == r.apart.dims);
  CHECK(r.fused.bytes == r.apart.bytes);
}

TEST_CASE("a float16 MatMul runs apart from its activation", "[eval][fusion][gemm]") {
  GraphBuilder b(15);
  b.input("X", DType::float16, {3, 4});
  b.initializer("W", random_tensor(DType::float16, {4, 5}, -1, 1, 24));
  b.node("MatMul", {"X", "W"}, {"Y"});
  b.node("Relu", {"Y"}, {"A"});
  b.node("Identity", {"A"}, {"Z"});
  b.output("Z");
  const FusedAndApart r = fused_and_apart(b, random_tensor(DType::float16, {3, 4}, -2, 2, 25));
  CHECK(r.fused_stats.product_fused == 0);
  CHECK(r.fused.bytes == r.apart.bytes);
}
