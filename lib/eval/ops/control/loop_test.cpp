// Subgraph ops: Loop, Scan (8 and 9+), SequenceMap and If with sequence
// outputs; malformed bodies and loops that do not end. Expected values are
// worked out by hand in the comments.
#include <catch2/catch.hpp>

#include <chrono>

#include "core/error.h"
#include "eval/backend/folders.h"
#include "eval/run/evaluator.h"
#include "support/error_of.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::Tensor;
using bnorm::eval::Value;
using namespace bnorm::test;
using Kind = Value::Kind;

Tensor i64(int64_t v) { return Tensor::from_f64(DType::int64, {}, {static_cast<double>(v)}); }
Tensor boolean(bool v) { return Tensor::from_f64(DType::boolean, {}, {v ? 1.0 : 0.0}); }

onnx::GraphProto& graph_attr(onnx::NodeProto& n, const char* name = "body") {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  return *a->mutable_g();
}

void add(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& in,
         const std::vector<std::string>& out, const std::string& name = {}) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + std::to_string(g.node_size()) : name);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
}

void names(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::vector<std::string>& ns) {
  for (const auto& n : ns) list->Add()->set_name(n);
}

// `b`'s model with an untyped graph input for each of `in` it lacks.
bnorm::Model with_inputs(const GraphBuilder& b, const std::map<std::string, Tensor>& in) {
  bnorm::Model m = b.model();
  auto* g = m.proto.mutable_graph();
  for (const auto& [name, t] : in) {
    bool declared = false;
    for (const auto& vi : g->input()) declared = declared || vi.name() == name;
    if (!declared) g->add_input()->set_name(name);
  }
  return m;
}

std::map<std::string, Tensor> run(const GraphBuilder& b, const std::map<std::string, Tensor>& in) {
  return bnorm::evaluate(with_inputs(b, in), in);
}

// The Error running `b` throws.
Error run_error(const GraphBuilder& b, const std::map<std::string, Tensor>& in) {
  return error_of([&] { run(b, in); });
}

// Loop(M, cond, x) whose body adds the outer W to x and scans it:
// x_i = x0 + (i + 1) W.
GraphBuilder add_loop(int opset) {
  GraphBuilder b(opset);
  b.initializer("W", f32({2}, {10, 100}));
  auto& n = b.node("Loop", {"M", "cond", "x0"}, {"x", "scan"}, "loop");
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"i", "c_in", "x_in"});
  add(g, "Identity", {"c_in"}, {"c_out"});
  add(g, "Add", {"x_in", "W"}, {"x_out"});
  add(g, "Identity", {"x_out"}, {"s"});
  names(g.mutable_output(), {"c_out", "x_out", "s"});
  auto* decl = g.mutable_output(2)->mutable_type()->mutable_tensor_type();
  decl->set_elem_type(1);
  decl->mutable_shape()->add_dim()->set_dim_value(2);
  b.output("x");
  b.output("scan");
  return b;
}

}  // namespace

TEST_CASE("Loop carries values, reads the outer scope and stacks scan outputs", "[eval][control]") {
  for (int opset : {1, 11, 13, 16, 23}) {
    const auto out = run(add_loop(opset), {{"M", i64(4)}, {"cond", boolean(true)}, {"x0", f32({2}, {1, 2})}});
    CHECK(out.at("x").to_f64() == std::vector<double>{41, 402});
    CHECK(out.at("scan").dims == std::vector<int64_t>{4, 2});
    CHECK(out.at("scan").to_f64() == std::vector<double>{11, 102, 21, 202, 31, 302, 41, 402});
  }
}

TEST_CASE("Loop stops when cond turns false and runs no iteration for M = 0 or cond = false", "[eval][control]") {
  GraphBuilder b(11);
  b.initializer("ten", f32({}, {10}));
  b.initializer("limit", f32({}, {35}));
  auto& n = b.node("Loop", {"", "cond", "s0"}, {"s", "all"}, "loop");
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"i", "c_in", "s_in"});
  add(g, "Add", {"s_in", "ten"}, {"s_out"});
  add(g, "Less", {"s_out", "limit"}, {"c_out"});
  add(g, "Identity", {"s_out"}, {"scan"});
  names(g.mutable_output(), {"c_out", "s_out", "scan"});
  b.output("s");
  b.output("all");
  // 10, 20, 30 keep going; 40 stops.
  auto out = run(b, {{"cond", boolean(true)}, {"s0", f32({}, {0})}});
  CHECK(out.at("s").to_f64() == std::vector<double>{40});
  CHECK(out.at("all").to_f64() == std::vector<double>{10, 20, 30, 40});
  // No iteration: the initial value; a scan output without a declared shape is refused.
  CHECK(run_error(b, {{"cond", boolean(false)}, {"s0", f32({}, {7})}}).kind() == ErrorKind::unsupported);
  const auto zero = run(add_loop(13), {{"M", i64(0)}, {"cond", boolean(true)}, {"x0", f32({2}, {1, 2})}});
  CHECK(zero.at("x").to_f64() == std::vector<double>{1, 2});
  CHECK(zero.at("scan").dims == std::vector<int64_t>{0, 2});
}

TEST_CASE("Loop refuses negative trip counts, loops without end and malformed bodies", "[eval][control]") {
  const Tensor x0 = f32({2}, {1, 2});
  Error e = run_error(add_loop(13), {{"M", i64(-1)}, {"cond", boolean(true)}, {"x0", x0}});
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.node() == "loop");
  GraphBuilder no_cond = add_loop(13);
  no_cond.graph().mutable_node(0)->set_input(1, "");
  CHECK(run(no_cond, {{"M", i64(2)}, {"x0", x0}}).at("x").to_f64() == std::vector<double>{21, 202});
  no_cond.graph().mutable_node(0)->set_input(0, "");
  CHECK(run_error(no_cond, {{"x0", x0}}).kind() == ErrorKind::unsupported);
  GraphBuilder extra = add_loop(13);
  names(extra.graph().mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_input(), {"unbound"});
  CHECK(run_error(extra, {{"M", i64(2)}, {"cond", boolean(true)}, {"x0", x0}}).kind() == ErrorKind::input);
  GraphBuilder missing = add_loop(13);
  missing.graph().mutable_node(0)->clear_attribute();
  CHECK(run_error(missing, {{"M", i64(2)}, {"cond", boolean(true)}, {"x0", x0}}).kind() == ErrorKind::input);
}

TEST_CASE("a Loop whose cond stays true ends at the iteration limit", "[eval][control]") {
  GraphBuilder b(13);
  auto& n = b.node("Loop", {"", "cond"}, {}, "forever");
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"i", "c_in"});
  add(g, "Identity", {"c_in"}, {"c_out"});
  names(g.mutable_output(), {"c_out"});
  b.node("Identity", {"cond"}, {"y"});
  b.output("y");
  const auto start = std::chrono::steady_clock::now();
  const Error e = run_error(b, {{"cond", boolean(true)}});
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK(e.node() == "forever");
  CHECK_THAT(e.bare_message(), Catch::Contains("limit of 1048576 iterations"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("Loop without cond refuses a body that asks to stop: the spec and the runtimes part", "[eval][control]") {
  GraphBuilder b(13);
  b.initializer("no", boolean(false));
  auto& n = b.node("Loop", {"M", ""}, {}, "loop");
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"i", "c_in"});
  add(g, "Identity", {"no"}, {"c_out"});
  names(g.mutable_output(), {"c_out"});
  b.node("Identity", {"M"}, {"y"});
  b.output("y");
  CHECK(run_error(b, {{"M", i64(3)}}).kind() == ErrorKind::unsupported);
}

TEST_CASE("an error in a Loop body names the inner node, the body's path and the iteration", "[eval][control]") {
  GraphBuilder b(13);
  b.initializer("data", f32({1}, {5}));
  auto& n = b.node("Loop", {"M", ""}, {"ys"}, "loop");
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"i", "c_in"});
  add(g, "Identity", {"c_in"}, {"c_out"});
  add(g, "Gather", {"data", "i"}, {"y"}, "gather");  // index 1 is out of range
  names(g.mutable_output(), {"c_out", "y"});
  b.output("ys");
  const Error e = run_error(b, {{"M", i64(3)}});
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.node() == "gather");
  CHECK_THAT(e.message(), Catch::Contains("in 'loop/body', iteration 1"));
}

TEST_CASE("Loop carries sequences from version 13 only", "[eval][control]") {
  for (int opset : {12, 13}) {
    GraphBuilder b(opset);
    b.input("x", DType::float32, {1});
    b.node("SequenceConstruct", {"x"}, {"s0"});
    auto& n = b.node("Loop", {"M", ""}, {"s"}, "loop");
    n.add_input("s0");
    auto& g = graph_attr(n);
    names(g.mutable_input(), {"i", "c_in", "s_in"});
    add(g, "Identity", {"c_in"}, {"c_out"});
    add(g, "SequenceInsert", {"s_in", "x"}, {"s_out"});
    names(g.mutable_output(), {"c_out", "s_out"});
    b.node("SequenceLength", {"s"}, {"n"});
    b.output("n");
    const std::map<std::string, Tensor> in{{"M", i64(3)}, {"x", f32({1}, {1})}};
    if (opset == 12) {
      CHECK(run_error(b, in).kind() == ErrorKind::input);
    } else {
      CHECK(run(b, in).at("n").to_f64() == std::vector<double>{4});
    }
  }
}

namespace {

// Scan `n`'s body: s_out = s_in + x, y = s_out; the node's outputs s and ys
// are the graph's.
void sum_body(GraphBuilder& b, onnx::NodeProto& n) {
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"s_in", "x"});
  add(g, "Add", {"s_in", "x"}, {"s_out"});
  add(g, "Identity", {"s_out"}, {"y"});
  names(g.mutable_output(), {"s_out", "y"});
  b.output("s");
  b.output("ys");
}

// Scan of X [2, 3] along `axis`: s += x_t, scanning s.
GraphBuilder sum_scan(int opset, int64_t in_axis, int64_t in_dir, int64_t out_axis, int64_t out_dir) {
  GraphBuilder b(opset);
  auto& n = b.node("Scan", {"s0", "X"}, {"s", "ys"}, "scan");
  set_attr(n, "num_scan_inputs", int64_t{1});
  set_ints(n, "scan_input_axes", {in_axis});
  set_ints(n, "scan_input_directions", {in_dir});
  set_ints(n, "scan_output_axes", {out_axis});
  set_ints(n, "scan_output_directions", {out_dir});
  sum_body(b, n);
  return b;
}

}  // namespace

TEST_CASE("Scan walks any axis in either direction and stacks outputs on any axis, appended or prepended",
          "[eval][control]") {
  const std::map<std::string, Tensor> in{{"s0", f32({2}, {0, 0})}, {"X", f32({2, 3}, {1, 2, 3, 4, 5, 6})}};
  // Columns reversed: [3,6], [2,5], [1,4]; sums [3,6], [5,11], [6,15].
  auto out = run(sum_scan(9, 1, 1, 0, 0), in);
  CHECK(out.at("s").to_f64() == std::vector<double>{6, 15});
  CHECK(out.at("ys").dims == std::vector<int64_t>{3, 2});
  CHECK(out.at("ys").to_f64() == std::vector<double>{3, 6, 5, 11, 6, 15});
  // Prepended, stacked on axis 1: rows [6, 5, 3] and [15, 11, 6].
  out = run(sum_scan(9, 1, 1, 1, 1), in);
  CHECK(out.at("ys").dims == std::vector<int64_t>{2, 3});
  CHECK(out.at("ys").to_f64() == std::vector<double>{6, 5, 3, 15, 11, 6});
  CHECK(run(sum_scan(11, -1, 1, -1, 1), in).at("ys").to_f64() == out.at("ys").to_f64());
  CHECK(run_error(sum_scan(9, -1, 1, 1, 1), in).kind() == ErrorKind::input);
  CHECK(run_error(sum_scan(11, 2, 0, 0, 0), in).kind() == ErrorKind::input);
  CHECK(run_error(sum_scan(11, 0, 2, 0, 0), in).kind() == ErrorKind::input);
}

TEST_CASE("Scan-8 runs each batch for its sequence length and pads scan outputs with zeros", "[eval][control]") {
  auto build = [](int64_t dir) {
    GraphBuilder b(8);
    auto& n = b.node("Scan", {"lens", "s0", "X"}, {"s", "ys"}, "scan");
    set_attr(n, "num_scan_inputs", int64_t{1});
    set_ints(n, "directions", {dir});
    sum_body(b, n);
    return b;
  };
  const Tensor x = f32({2, 3, 1}, {1, 2, 3, 10, 20, 30});
  const Tensor s0 = f32({2, 1}, {0, 100});
  // Batch 0: 1, 3, 6. Batch 1 (one step): 110, then zeros.
  auto out = run(build(0), {{"lens", Tensor::from_f64(DType::int64, {2}, {3, 1})}, {"s0", s0}, {"X", x}});
  CHECK(out.at("s").to_f64() == std::vector<double>{6, 110});
  CHECK(out.at("ys").dims == std::vector<int64_t>{2, 3, 1});
  CHECK(out.at("ys").to_f64() == std::vector<double>{1, 3, 6, 110, 0, 0});
  // Reversed, full lengths: 3, 5, 6 and 130, 150, 160.
  out = run(build(1), {{"lens", Tensor::from_f64(DType::int64, {2}, {3, 3})}, {"s0", s0}, {"X", x}});
  CHECK(out.at("ys").to_f64() == std::vector<double>{3, 5, 6, 130, 150, 160});
  const Tensor short_lens = Tensor::from_f64(DType::int64, {2}, {3, 1});
  CHECK(run_error(build(1), {{"lens", short_lens}, {"s0", s0}, {"X", x}}).kind() == ErrorKind::unsupported);
  const Tensor long_lens = Tensor::from_f64(DType::int64, {2}, {4, 1});
  CHECK(run_error(build(0), {{"lens", long_lens}, {"s0", s0}, {"X", x}}).kind() == ErrorKind::input);
}

TEST_CASE("SequenceMap maps sequences position by position with tensors as they are", "[eval][control]") {
  GraphBuilder b(17);
  b.input("A", DType::float32, {1});
  b.input("B", DType::float32, {2});
  b.input("T", DType::float32, {1});
  b.node("SequenceConstruct", {"A", "B"}, {"S"});
  auto& n = b.node("SequenceMap", {"S", "T"}, {"Y"}, "map");
  auto& g = graph_attr(n);
  names(g.mutable_input(), {"s", "t"});
  add(g, "Add", {"s", "t"}, {"y"});
  names(g.mutable_output(), {"y"});
  b.output("Y");
  const std::map<std::string, Value> in{{"A", Value::of(f32({1}, {1}))},
                                        {"B", Value::of(f32({2}, {2, 3}))},
                                        {"T", Value::of(f32({1}, {10}))}};
  const Value y = bnorm::evaluate_values(b.model(), in).at("Y");
  REQUIRE(y.kind == Kind::sequence);
  REQUIRE(y.items.size() == 2);
  CHECK(y.items[0].to_f64() == std::vector<double>{11});
  CHECK(y.items[1].to_f64() == std::vector<double>{12, 13});
  n.set_input(1, "S2");
  b.node("SequenceConstruct", {"A"}, {"S2"});
  CHECK_THROWS_AS(bnorm::evaluate_values(b.model(), in), Error);
}

TEST_CASE("If returns sequences from version 13, an error in a branch names its path", "[eval][control]") {
  for (int opset : {11, 13}) {
    GraphBuilder b(opset);
    b.input("c", DType::boolean, {});
    b.input("x", DType::float32, {1});
    b.initializer("k", i64(1));
    auto& n = b.node("If", {"c"}, {"S"}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto& g = graph_attr(n, branch);
      add(g, "SequenceConstruct", {"x", "x"}, {"s"}, "construct");
      names(g.mutable_output(), {"s"});
    }
    b.node("SequenceLength", {"S"}, {"n"});
    b.output("n");
    const std::map<std::string, Tensor> in{{"c", boolean(true)}, {"x", f32({1}, {1})}};
    if (opset == 11) {
      CHECK(run_error(b, in).kind() == ErrorKind::input);
    } else {
      CHECK(run(b, in).at("n").to_f64() == std::vector<double>{2});
      b.graph().mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(1, "k");
      const Error e = run_error(b, in);
      CHECK(e.node() == "construct");
      CHECK_THAT(e.message(), Catch::Contains("in 'if/then_branch'"));
    }
  }
}
