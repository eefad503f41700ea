// The executor: order, scopes, inputs, values written in place and the errors it reports
// (fusion_test.cpp: its fusions; cache_test.cpp: runs sharing an EvalCache).
#include <catch2/catch.hpp>
#include <fmt/format.h>

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

}  // namespace

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
