// The executor: order, scopes, inputs, fusion and the errors it reports.
#include <catch2/catch.hpp>
#include <fmt/format.h>

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
using bnorm::test::set_attr;

Tensor random_tensor(DType t, const std::vector<int64_t>& dims, double lo, double hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(bnorm::checked_numel(dims)));
  for (double& e : v) e = dist(gen);
  return Tensor::from_f64(t, dims, v);
}

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

TEST_CASE("nodes run in topological order whatever order the file lists them in", "[eval]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {2, 2});
  b.node("Mul", {"A", "A"}, {"Z"}, "second");
  b.node("Add", {"X", "X"}, {"A"}, "first");
  b.output("Z");
  const auto out = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {2, 2}, {1, 2, 3, 4})}});
  CHECK(out.at("Z").to_f64() == std::vector<double>{4, 16, 36, 64});
}

TEST_CASE("a graph input given by the caller overrides the initializer of the same name", "[eval]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {2});
  b.input("W", DType::float32, {2});
  b.initializer("W", Tensor::from_f64(DType::float32, {2}, {10, 20}));
  b.node("Add", {"X", "W"}, {"Z"});
  b.output("Z");
  const Tensor x = Tensor::from_f64(DType::float32, {2}, {1, 2});
  CHECK(bnorm::evaluate(b.model(), {{"X", x}}).at("Z").to_f64() == std::vector<double>{11, 22});
  const Tensor w = Tensor::from_f64(DType::float32, {2}, {100, 200});
  CHECK(bnorm::evaluate(b.model(), {{"X", x}, {"W", w}}).at("Z").to_f64() == std::vector<double>{101, 202});
}

TEST_CASE("If branches see the values of the enclosing graph", "[eval]") {
  GraphBuilder b(13);
  b.input("cond", DType::boolean, {});
  b.input("X", DType::float32, {2});
  b.node("Relu", {"X"}, {"R"});
  auto& n = b.node("If", {"cond"}, {"Z"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    auto* node = g->add_node();
    node->set_op_type(std::string(branch) == "then_branch" ? "Add" : "Sub");
    node->add_input("R");
    node->add_input("X");
    node->add_output("out");
    g->add_output()->set_name("out");
  }
  b.output("Z");
  const Tensor x = Tensor::from_f64(DType::float32, {2}, {-1, 2});
  Tensor yes(DType::boolean, {});
  yes.bytes[0] = 1;
  const Tensor no(DType::boolean, {});
  CHECK(bnorm::evaluate(b.model(), {{"cond", yes}, {"X", x}}).at("Z").to_f64() == std::vector<double>{-1, 4});
  CHECK(bnorm::evaluate(b.model(), {{"cond", no}, {"X", x}}).at("Z").to_f64() == std::vector<double>{1, 0});
}

TEST_CASE("a cycle is an error naming a node on it", "[eval][errors]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {1});
  b.node("Add", {"X", "B"}, {"A"}, "a");
  b.node("Relu", {"A"}, {"B"}, "b");
  b.output("B");
  const Error e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1})}}); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK((e.node() == "a" || e.node() == "b"));
  CHECK_THAT(e.message(), Catch::Contains("cycle"));
}

TEST_CASE("an op the evaluator lacks is an unsupported error naming the node", "[eval][errors]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {1});
  b.node("StringNormalizer", {"X"}, {"Y"}, "lp");
  b.output("Y");
  const Error e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1})}}); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK(e.node() == "lp");
  CHECK(e.bare_message() == "op 'StringNormalizer' is not supported by bnorm eval: bnorm eval does not hold string tensors");
}

TEST_CASE("a missing or mistyped graph input is a usage error naming it", "[eval][errors]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {2, 3});
  b.node("Relu", {"X"}, {"Y"});
  b.output("Y");
  Error e = error_of([&] { bnorm::evaluate(b.model(), {}); });
  CHECK(e.kind() == ErrorKind::usage);
  CHECK(e.bare_message() == "missing input 'X'");
  e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float64, {2, 3})}}); });
  CHECK(e.kind() == ErrorKind::usage);
  CHECK(e.bare_message() == "input 'X' has type double, the model declares float");
  e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {3, 2})}}); });
  CHECK(e.bare_message() == "input 'X' has shape [3, 2], the model declares [2, 3]");
  e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {2, 3})}, {"Q", Tensor()}}); });
  CHECK(e.bare_message() == "'Q' is not an input of the model");
}

TEST_CASE("a node input that names no value is an error naming the node", "[eval][errors]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {1});
  b.node("Add", {"X", "nowhere"}, {"Y"}, "add");
  b.output("Y");
  const Error e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1})}}); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.node() == "add");
  CHECK_THAT(e.bare_message(), Catch::Contains("'nowhere'"));
}

namespace {

// y[i] = mean of row i of a [2, 3] matrix: the float64 reference.
std::vector<double> row_means(const std::vector<double>& x) {
  return {(x[0] + x[1] + x[2]) / 3.0, (x[3] + x[4] + x[5]) / 3.0};
}

}  // namespace

TEST_CASE("ReduceMean at opset 18 reduces over the axes input, not every axis (was read as ReduceMean-13)",
          "[eval][versions][regression]") {
  const std::vector<double> x{1, 2, 3, 10, 20, 40};
  GraphBuilder b(18);
  b.input("X", DType::float32, {2, 3});
  b.initializer("axes", Tensor::from_f64(DType::int64, {1}, {1}));
  bnorm::test::set_attr(b.node("ReduceMean", {"X", "axes"}, {"Y"}, "mean"), "keepdims", int64_t{0});
  b.output("Y");
  const auto out = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {2, 3}, x)}});
  const Tensor& y = out.at("Y");
  REQUIRE(y.dims == std::vector<int64_t>{2});
  const auto expect = row_means(x);
  CHECK(y.to_f64()[0] == Approx(expect[0]));
  CHECK(y.to_f64()[1] == Approx(expect[1]));
}

TEST_CASE("ReduceMax-18 with an empty axes input and noop_with_empty_axes = 1 is the identity",
          "[eval][versions][regression]") {
  GraphBuilder b(18);
  b.input("X", DType::float32, {2, 2});
  b.initializer("axes", Tensor(DType::int64, {0}));
  bnorm::test::set_attr(b.node("ReduceMax", {"X", "axes"}, {"Y"}, "max"), "noop_with_empty_axes", int64_t{1});
  b.output("Y");
  const auto out = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {2, 2}, {1, -2, 3, 4})}});
  CHECK(out.at("Y").to_f64() == std::vector<double>{1, -2, 3, 4});
}

TEST_CASE("Split-18 with num_outputs gives ceil-sized chunks and a smaller last one",
          "[eval][versions][regression]") {
  GraphBuilder b(18);
  b.input("X", DType::float32, {5});
  bnorm::test::set_attr(b.node("Split", {"X"}, {"A", "B"}, "split"), "num_outputs", int64_t{2});
  b.output("A");
  b.output("B");
  const auto out = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {5}, {1, 2, 3, 4, 5})}});
  CHECK(out.at("A").to_f64() == std::vector<double>{1, 2, 3});
  CHECK(out.at("B").to_f64() == std::vector<double>{4, 5});
}

TEST_CASE("Pad-18 pads only the axes its axes input names", "[eval][versions][regression]") {
  GraphBuilder b(18);
  b.input("X", DType::float32, {2, 2});
  b.initializer("pads", Tensor::from_f64(DType::int64, {2}, {1, 0}));  // axis 1: one before, none after
  b.initializer("value", Tensor::from_f64(DType::float32, {}, {9}));
  b.initializer("axes", Tensor::from_f64(DType::int64, {1}, {1}));
  b.node("Pad", {"X", "pads", "value", "axes"}, {"Y"}, "pad");
  b.output("Y");
  const auto out = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {2, 2}, {1, 2, 3, 4})}});
  REQUIRE(out.at("Y").dims == std::vector<int64_t>{2, 3});
  CHECK(out.at("Y").to_f64() == std::vector<double>{9, 1, 2, 9, 3, 4});
}

TEST_CASE("a model with several unsupported ops lists every one at once, with counts and labels",
          "[eval][errors]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {1});
  b.node("StringNormalizer", {"X"}, {"A"}, "lp1");
  b.node("StringNormalizer", {"A"}, {"B"}, "");
  b.node("RandomNormalLike", {"B"}, {"C"}, "coin");
  b.node("LayerNormalization", {"C"}, {"Y"}, "ln");
  b.graph().mutable_node(1)->clear_name();
  b.output("Y");
  const Error e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1})}}); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK_THAT(e.bare_message(), Catch::StartsWith("3 kinds of node cannot run"));
  CHECK_THAT(e.bare_message(), Catch::Contains("op 'StringNormalizer' is not supported by bnorm eval: bnorm eval does "
                                               "not hold string tensors (2 nodes: lp1, StringNormalizer #1 -> 'B')"));
  CHECK_THAT(e.bare_message(), Catch::Contains("op 'RandomNormalLike' is not supported by bnorm eval: its outputs are random"));
  CHECK_THAT(e.bare_message(), Catch::Contains("op 'LayerNormalization' does not exist at opset 13: it was "
                                               "introduced at opset 17"));
}

TEST_CASE("a version the table knows but bnorm does not implement is refused naming the versions it has",
          "[eval][errors][versions]") {
  GraphBuilder b(28);
  b.input("X", DType::float32, {1});
  b.node("Celu", {"X"}, {"Y"}, "celu");
  b.output("Y");
  const Error e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1})}}); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK(e.node() == "celu");
  CHECK(e.bare_message() == "Celu-28 is not implemented by bnorm eval (implemented: 12; the op's versions: 12, 28)");
}

TEST_CASE("Clip with min greater than max sets every value to max, at every version and fused after a norm",
          "[eval][regression]") {
  // Operators.md (Clip-13): min > max gives max everywhere, Min(max, Max(x, min)).
  const std::vector<double> x{-3, 0.5, 1.5, 4};
  for (int version : {6, 11, 13}) {
    INFO("Clip-" << version);
    GraphBuilder b(version);
    b.input("X", DType::float32, {4});
    auto& clip = b.node("Clip", version < 11 ? std::vector<std::string>{"X"} : std::vector<std::string>{"X", "lo", "hi"},
                        {"Y"}, "clip");
    if (version < 11) {
      set_attr(clip, "min", 2.0f);
      set_attr(clip, "max", 1.0f);
    } else {
      b.initializer("lo", Tensor::from_f64(DType::float32, {}, {2}));
      b.initializer("hi", Tensor::from_f64(DType::float32, {}, {1}));
    }
    b.output("Y");
    const auto out = bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {4}, x)}});
    CHECK(out.at("Y").to_f64() == std::vector<double>{1, 1, 1, 1});
  }
}

TEST_CASE("Pad-1 reads paddings, or pads as opset-1 exporters wrote it, without either it names the attribute",
          "[eval][regression]") {
  for (const char* name : {"paddings", "pads", ""}) {
    INFO(name);
    GraphBuilder b(1);
    b.input("X", DType::float32, {2});
    auto& pad = b.node("Pad", {"X"}, {"Y"}, "pad");
    if (*name) {
      auto* a = pad.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(1);
      a->add_ints(0);
    }
    b.output("Y");
    const auto run = [&] { return bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::float32, {2}, {3, 4})}}); };
    if (*name) {
      CHECK(run().at("Y").to_f64() == std::vector<double>{0, 3, 4});
    } else {
      const Error e = error_of(run);
      CHECK(e.bare_message() == "attribute 'paddings' is missing");
    }
  }
}

TEST_CASE("an error at a node without a name names it by its label", "[eval][errors][labels]") {
  GraphBuilder b(13);
  b.input("X", DType::float32, {2, 3});
  b.initializer("shape", Tensor::from_f64(DType::int64, {1}, {7}));
  b.node("Reshape", {"X", "shape"}, {"Y"}, "");
  b.graph().mutable_node(0)->clear_name();
  b.output("Y");
  const Error e = error_of([&] { bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {2, 3})}}); });
  CHECK(e.node() == "Reshape #0 -> 'Y'");
  CHECK_THAT(e.message(), Catch::StartsWith("node Reshape #0 -> 'Y' (Reshape-13): "));
}

// Ops may write an input in place when its value dies at their node
// (OpContext::donated): BatchNormalization, Add, Sub, Mul, Div on float and
// double. A value read later, a graph output, a value read twice by one
// node and the caller's own input tensors must come out untouched.
TEST_CASE("inputs written in place are only values that die at the node", "[eval][inplace]") {
  for (DType t : {DType::float32, DType::float64}) {
    GraphBuilder g(15);
    g.input("x", t, {1, 2, 2, 2});
    const std::vector<double> xv{1, -2, 3, -4, 5, -6, 7, -8};
    g.initializer("s", bnorm::Tensor::from_f64(t, {2}, {2, 0.5}));
    g.initializer("b", bnorm::Tensor::from_f64(t, {2}, {1, -1}));
    g.initializer("m", bnorm::Tensor::from_f64(t, {2}, {0, 1}));
    g.initializer("v", bnorm::Tensor::from_f64(t, {2}, {1, 4}));
    g.initializer("c", bnorm::Tensor::from_f64(t, {1}, {10}));
    g.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"bn"});  // x dies here (the caller's copy stays)
    g.node("Add", {"bn", "x2"}, {"sum"});                               // bn read again below: kept
    g.node("Mul", {"x", "c"}, {"x2"});                                  // reads x too: x dies at the later of the two
    g.node("Mul", {"sum", "sum"}, {"sq"});                              // read twice by one node: kept
    g.node("Sub", {"sq", "bn"}, {"out"});                               // sq dies here
    g.output("out");
    g.output("sum");
    const Tensor x = bnorm::Tensor::from_f64(t, {1, 2, 2, 2}, xv);
    const auto r = evaluate(g.model(), {{"x", x}});
    REQUIRE(x.to_f64() == xv);
    const double eps = 1e-5;
    std::vector<double> want_out, want_sum;
    for (size_t i = 0; i < xv.size(); ++i) {
      const size_t c = i / 4;
      const double scale[] = {2, 0.5}, bias[] = {1, -1}, mean[] = {0, 1}, var[] = {1, 4};
      const double bn = (xv[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
      const double sum = bn + xv[i] * 10;
      want_sum.push_back(sum);
      want_out.push_back(sum * sum - bn);
    }
    INFO(bnorm::dtype_name(t));
    bnorm::test::check_close(r.at("sum").to_f64(), want_sum, 1e-4, 1e-5);
    bnorm::test::check_close(r.at("out").to_f64(), want_out, 1e-3, 1e-5);
  }
}

TEST_CASE("runs sharing an EvalCache decode weights once and never write them in place", "[eval][cache]") {
  // Relu(w) is the last use of the initializer w: without the cache's hold
  // the Relu would write it in place, and the next run would start from
  // max(w, 0).
  GraphBuilder g(15);
  g.input("x", DType::float32, {4});
  g.initializer("w", Tensor::from_f64(DType::float32, {4}, {-1, 2, -3, 4}));
  g.initializer("w2", Tensor::from_f64(DType::float32, {4}, {5, -6, 7, -8}));
  g.node("Relu", {"w"}, {"rw"});
  g.node("Add", {"x", "rw"}, {"y"});
  g.output("y");
  g.output("w2");  // an initializer that is also an output leaves with the outputs
  const Tensor x = Tensor::from_f64(DType::float32, {4}, {0.5, 0.5, 0.5, 0.5});
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  const std::vector<double> want{0.5, 2.5, 0.5, 4.5};
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run + 1);
    const auto r = evaluate(g.model(), {{"x", x}}, opts);
    REQUIRE(r.at("y").to_f64() == want);
    REQUIRE(r.at("w2").to_f64() == std::vector<double>{5, -6, 7, -8});
    // The weights the run used are back in the cache, as decoded.
    REQUIRE(cache.weights.count("w") == 1);
    REQUIRE(cache.weights.at("w").to_f64() == std::vector<double>{-1, 2, -3, 4});
  }
}

TEST_CASE("an EvalCache given with another model or float64 setting is a usage error", "[eval][cache][errors]") {
  GraphBuilder g(15);
  g.input("x", DType::float32, {2});
  g.initializer("w", Tensor::from_f64(DType::float32, {2}, {1, 2}));
  g.node("Add", {"x", "w"}, {"y"});
  g.output("y");
  const bnorm::Model a = g.model();
  const bnorm::Model b = g.model();
  const Tensor x = Tensor::from_f64(DType::float32, {2}, {1, 1});
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  REQUIRE(evaluate(a, {{"x", x}}, opts).at("y").to_f64() == std::vector<double>{2, 3});
  const Error e = error_of([&] { evaluate(b, {{"x", x}}, opts); });
  REQUIRE(e.kind() == ErrorKind::usage);
  REQUIRE_THAT(e.message(), Catch::Contains("one model"));
}

TEST_CASE("runs sharing an EvalCache compute nodes of constants once", "[eval][cache]") {
  // Neg(w) and Relu of it read only constants: run 1 computes them, later
  // runs take their outputs from the cache; Add reads the input and runs
  // every time. Relu's output is written in place of nothing it reads.
  GraphBuilder g(15);
  g.input("x", DType::float32, {3});
  g.initializer("w", Tensor::from_f64(DType::float32, {3}, {1, -2, 3}));
  g.node("Neg", {"w"}, {"nw"});
  g.node("Relu", {"nw"}, {"rw"});
  g.node("Add", {"x", "rw"}, {"y"});
  g.output("y");
  const Tensor x = Tensor::from_f64(DType::float32, {3}, {10, 20, 30});
  bnorm::EvalCache cache;
  bnorm::EvalStats stats;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  opts.stats = &stats;
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run + 1);
    stats = {};
    REQUIRE(evaluate(g.model(), {{"x", x}}, opts).at("y").to_f64() == std::vector<double>{10, 22, 30});
    CHECK(stats.nodes_run == (run == 0 ? 3 : 1));
    CHECK(cache.weights.count("rw") == 1);
  }
  // An observer sees every node: nothing is taken from the cache then.
  int seen = 0;
  opts.on_value = [&](const std::string&, const std::string&, const Tensor&) { ++seen; };
  stats = {};
  REQUIRE(evaluate(g.model(), {{"x", x}}, opts).at("y").to_f64() == std::vector<double>{10, 22, 30});
  CHECK(seen == 3);
  CHECK(stats.nodes_run == 3);
  // A given input that overrides an initializer makes what reads it no constant.
  opts.on_value = nullptr;
  GraphBuilder h(15);
  h.input("x", DType::float32, {3});
  h.input("w", DType::float32, {3});
  h.initializer("w", Tensor::from_f64(DType::float32, {3}, {1, -2, 3}));
  h.node("Neg", {"w"}, {"nw"});
  h.node("Add", {"x", "nw"}, {"y"});
  h.output("y");
  bnorm::EvalCache cache2;
  opts.cache = &cache2;
  for (double v : {1.0, 2.0}) {
    const Tensor w = Tensor::from_f64(DType::float32, {3}, {v, v, v});
    REQUIRE(evaluate(h.model(), {{"x", x}, {"w", w}}, opts).at("y").to_f64() ==
            std::vector<double>{10 - v, 20 - v, 30 - v});
  }
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

// X [2, 4, 9, 7] -> Conv (with bias) -> [BatchNormalization] -> [Add R] -> [activation] -> Z.
GraphBuilder conv_then(const ConvCase& cc, bool bn, const ActCase* act, DType t, Residual res = Residual::none) {
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

TEST_CASE("runs sharing an EvalCache keep a Gemm's transposed constant weights, and only those", "[eval][cache]") {
  // Y = A B^T: B a [3, 2] initializer, or given by the caller (then never kept).
  GraphBuilder g(13);
  g.input("A", DType::float32, {2, 2});
  g.input("B", DType::float32, {3, 2});
  g.initializer("B", Tensor::from_f64(DType::float32, {3, 2}, {1, 2, 3, 4, 5, 6}));
  auto& n = g.node("Gemm", {"A", "B"}, {"Y"});
  set_attr(n, "transB", int64_t{1});
  g.output("Y");
  const Tensor a = Tensor::from_f64(DType::float32, {2, 2}, {1, 10, 100, 1000});
  bnorm::EvalCache cache;
  bnorm::EvalOptions opts;
  opts.cache = &cache;
  for (int run = 0; run < 2; ++run) {
    REQUIRE(evaluate(g.model(), {{"A", a}}, opts).at("Y").to_f64() ==
            std::vector<double>{21, 43, 65, 2100, 4300, 6500});
    CHECK(cache.prepared.size() == 1);
  }
  bnorm::EvalCache other;
  opts.cache = &other;
  for (double v : {1.0, 2.0}) {
    const Tensor b = Tensor::from_f64(DType::float32, {3, 2}, {v, v, v, v, v, v});
    REQUIRE(evaluate(g.model(), {{"A", a}, {"B", b}}, opts).at("Y").to_f64() ==
            std::vector<double>{11 * v, 11 * v, 11 * v, 1100 * v, 1100 * v, 1100 * v});
    CHECK(other.prepared.empty());
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
