// Sequences, optionals and values that are not tensors in the executor:
// SequenceConstruct/Empty/Insert/At/Erase/Length, SplitToSequence,
// ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement and
// Identity, at the versions where their types changed. Expected values are
// written out by hand.
#include <catch2/catch.hpp>

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

// Runs `b` on value inputs and returns its outputs.
std::map<std::string, Value> run(const GraphBuilder& b, const std::map<std::string, Value>& in = {}) {
  return bnorm::evaluate_values(b.model(), in);
}

// The Error running `b` throws.
Error run_error(const GraphBuilder& b, const std::map<std::string, Value>& in = {}) {
  return error_of([&] { run(b, in); });
}

// A graph input declared as a sequence of float tensors.
void sequence_input(GraphBuilder& b, const std::string& name) {
  auto* vi = b.graph().add_input();
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
}

Value seq(std::vector<Tensor> items) { return Value::sequence(std::move(items), DType::float32); }

std::vector<std::vector<double>> contents(const Value& v) {
  REQUIRE(v.kind == Kind::sequence);
  std::vector<std::vector<double>> out;
  for (const Tensor& t : v.items) out.push_back(t.to_f64());
  return out;
}

}  // namespace

TEST_CASE("SequenceInsert puts tensors at the back, at a position or counted from the back", "[eval][control]") {
  GraphBuilder b(11);
  b.input("A", DType::float32, {1});
  b.input("B", DType::float32, {2});
  b.initializer("minus1", i64(-1));
  b.node("SequenceConstruct", {"A"}, {"s1"});
  b.node("SequenceInsert", {"s1", "B"}, {"s2"});              // [A, B]
  b.node("SequenceInsert", {"s2", "A", "minus1"}, {"s3"});    // [A, A, B]
  b.node("SequenceErase", {"s3"}, {"s4"});                    // [A, A]
  b.node("SequenceLength", {"s3"}, {"n"});
  b.node("SequenceAt", {"s3", "minus1"}, {"last"});
  for (const char* o : {"s3", "s4", "n", "last"}) b.output(o);
  const auto out = run(b, {{"A", Value::of(f32({1}, {7}))}, {"B", Value::of(f32({2}, {1, 2}))}});
  CHECK(contents(out.at("s3")) == std::vector<std::vector<double>>{{7}, {7}, {1, 2}});
  CHECK(contents(out.at("s4")) == std::vector<std::vector<double>>{{7}, {7}});
  CHECK(out.at("n").tensor.to_f64() == std::vector<double>{3});
  CHECK(out.at("n").tensor.dtype == DType::int64);
  CHECK(out.at("last").tensor.to_f64() == std::vector<double>{1, 2});
}

TEST_CASE("positions outside the sequence and mixed element types are input errors", "[eval][control]") {
  for (int64_t pos : {2, -3}) {
    GraphBuilder b(11);
    sequence_input(b, "S");
    b.initializer("p", i64(pos));
    b.node("SequenceAt", {"S", "p"}, {"t"}, "at");
    b.output("t");
    const Error e = run_error(b, {{"S", seq({f32({1}, {1}), f32({1}, {2})})}});
    CHECK(e.kind() == ErrorKind::input);
    CHECK(e.node() == "at");
  }
  GraphBuilder b(11);
  sequence_input(b, "S");
  b.input("I", DType::int64, {});
  b.node("SequenceInsert", {"S", "I"}, {"t"}, "ins");
  b.output("t");
  CHECK(run_error(b, {{"S", seq({f32({1}, {1})})}, {"I", Value::of(i64(1))}}).kind() == ErrorKind::input);
  GraphBuilder p(11);
  sequence_input(p, "S");
  p.node("SequenceInsert", {"S", "S", "S"}, {"t"}, "ins");  // a sequence as tensor and position
  p.output("t");
  CHECK(run_error(p, {{"S", seq({f32({1}, {1})})}}).bare_message() == "input 'tensor' must be a tensor, is a sequence");
  GraphBuilder e(11);
  e.node("SequenceEmpty", {}, {"s"});
  e.node("SequenceErase", {"s"}, {"t"}, "erase");
  e.output("t");
  CHECK_THROWS_AS(run(e), Error);
}

TEST_CASE("SequenceEmpty holds its dtype, float by default", "[eval][control]") {
  GraphBuilder b(11);
  auto& n = b.node("SequenceEmpty", {}, {"s"});
  set_attr(n, "dtype", int64_t{7});
  b.node("SequenceEmpty", {}, {"f"});
  b.output("s");
  b.output("f");
  const auto out = run(b);
  CHECK(out.at("s").items.empty());
  CHECK(out.at("s").elem == DType::int64);
  CHECK(out.at("f").elem == DType::float32);
}

TEST_CASE("SplitToSequence cuts by a scalar, by lengths or into slices of one", "[eval][control]") {
  const Tensor x = f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto split = [&](int opset, const Tensor* s, int64_t axis, int64_t keepdims) {
    GraphBuilder b(opset);
    b.input("X", x.dtype, x.dims);
    std::vector<std::string> in{"X"};
    if (s) {
      b.initializer("split", *s);
      in.push_back("split");
    }
    auto& n = b.node("SplitToSequence", in, {"S"});
    set_attr(n, "axis", axis);
    if (keepdims >= 0) set_attr(n, "keepdims", keepdims);
    b.output("S");
    return run(b, {{"X", Value::of(x)}}).at("S");
  };
  const Tensor two = i64(2);
  Value v = split(11, &two, -1, -1);
  CHECK(contents(v) == std::vector<std::vector<double>>{{0, 1, 5, 6}, {2, 3, 7, 8}, {4, 9}});
  CHECK(v.items[2].dims == std::vector<int64_t>{2, 1});
  const Tensor lengths = Tensor::from_f64(DType::int32, {2}, {4, 1});
  v = split(11, &lengths, 1, 0);  // keepdims is ignored with a split
  CHECK(contents(v) == std::vector<std::vector<double>>{{0, 1, 2, 3, 5, 6, 7, 8}, {4, 9}});
  v = split(11, nullptr, 0, 0);
  CHECK(v.items.size() == 2);
  CHECK(v.items[1].dims == std::vector<int64_t>{5});
  CHECK(v.items[1].to_f64() == std::vector<double>{5, 6, 7, 8, 9});
  CHECK(split(11, nullptr, 0, 1).items[1].dims == std::vector<int64_t>{1, 5});
  const Tensor bad = Tensor::from_f64(DType::int64, {2}, {4, 2});
  CHECK_THROWS_AS(split(11, &bad, 1, -1), Error);
  const Tensor zero = i64(0);
  CHECK_THROWS_AS(split(11, &zero, 1, -1), Error);
  CHECK_THROWS_AS(split(11, nullptr, 2, -1), Error);
}

TEST_CASE("SplitToSequence takes bfloat16 from version 24 only", "[eval][control]") {
  for (int opset : {23, 24}) {
    GraphBuilder b(opset);
    b.input("X", DType::bfloat16, {2});
    b.node("SplitToSequence", {"X"}, {"S"}, "split");
    b.output("S");
    const Value x = Value::of(Tensor::from_f64(DType::bfloat16, {2}, {1.5, -2}));
    if (opset == 23) {
      CHECK(run_error(b, {{"X", x}}).kind() == ErrorKind::input);
    } else {
      CHECK(contents(run(b, {{"X", x}}).at("S")) == std::vector<std::vector<double>>{{1.5}, {-2}});
    }
  }
}

TEST_CASE("ConcatFromSequence joins on an existing axis or stacks on a new one", "[eval][control]") {
  auto concat = [](int64_t axis, int64_t new_axis, const Value& s) {
    GraphBuilder b(11);
    sequence_input(b, "S");
    auto& n = b.node("ConcatFromSequence", {"S"}, {"Y"}, "concat");
    set_attr(n, "axis", axis);
    if (new_axis >= 0) set_attr(n, "new_axis", new_axis);
    b.output("Y");
    return run(b, {{"S", s}}).at("Y").tensor;
  };
  const Value s = seq({f32({2, 1}, {1, 2}), f32({2, 1}, {3, 4})});
  Tensor y = concat(-1, 0, s);
  CHECK(y.dims == std::vector<int64_t>{2, 2});
  CHECK(y.to_f64() == std::vector<double>{1, 3, 2, 4});
  y = concat(0, -1, s);
  CHECK(y.dims == std::vector<int64_t>{4, 1});
  CHECK(y.to_f64() == std::vector<double>{1, 2, 3, 4});
  y = concat(-1, 1, s);  // axis -1 of the stacked rank 3: [2, 1, 2]
  CHECK(y.dims == std::vector<int64_t>{2, 1, 2});
  CHECK(y.to_f64() == std::vector<double>{1, 3, 2, 4});
  y = concat(2, 1, s);
  CHECK(y.dims == std::vector<int64_t>{2, 1, 2});
  CHECK_THROWS_AS(concat(2, 0, s), Error);
  CHECK_THROWS_AS(concat(3, 1, s), Error);
  CHECK_THROWS_AS(concat(0, 0, seq({})), Error);
  CHECK_THROWS_AS(concat(1, 0, seq({f32({2, 1}, {1, 2}), f32({1, 1}, {3})})), Error);
}

TEST_CASE("Optional wraps a value or makes an empty one of its type attribute", "[eval][control]") {
  GraphBuilder b(18);
  b.input("X", DType::float32, {2});
  b.node("Optional", {"X"}, {"full"});
  auto& n = b.node("Optional", {}, {"empty"});
  auto* a = n.add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
  b.node("OptionalHasElement", {"full"}, {"has_full"});
  b.node("OptionalHasElement", {"empty"}, {"has_empty"});
  b.node("OptionalHasElement", {"X"}, {"has_tensor"});
  b.node("OptionalHasElement", {""}, {"has_nothing"});
  b.node("OptionalGetElement", {"full"}, {"got"});
  b.node("OptionalGetElement", {"X"}, {"got_tensor"});
  for (const char* o : {"empty", "has_full", "has_empty", "has_tensor", "has_nothing", "got", "got_tensor"}) b.output(o);
  const auto out = run(b, {{"X", Value::of(f32({2}, {3, 4}))}});
  CHECK(out.at("empty").kind == Kind::optional);
  CHECK_FALSE(out.at("empty").has_element);
  CHECK(out.at("has_full").tensor.to_f64() == std::vector<double>{1});
  CHECK(out.at("has_empty").tensor.to_f64() == std::vector<double>{0});
  CHECK(out.at("has_tensor").tensor.to_f64() == std::vector<double>{1});
  CHECK(out.at("has_nothing").tensor.to_f64() == std::vector<double>{0});
  CHECK(out.at("got").tensor.to_f64() == std::vector<double>{3, 4});
  CHECK(out.at("got_tensor").tensor.to_f64() == std::vector<double>{3, 4});
}

TEST_CASE("Optional ops before version 18 take optionals only, an empty one has no element to get", "[eval][control]") {
  for (const char* op : {"OptionalHasElement", "OptionalGetElement"}) {
    GraphBuilder b(15);
    b.input("X", DType::float32, {2});
    b.node(op, {"X"}, {"Y"}, "opt");
    b.output("Y");
    const Error e = run_error(b, {{"X", Value::of(f32({2}, {3, 4}))}});
    CHECK(e.kind() == ErrorKind::input);
    CHECK(e.node() == "opt");
  }
  GraphBuilder b(16);
  auto* vi = b.graph().add_input();
  vi->set_name("O");
  vi->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  b.node("OptionalGetElement", {"O"}, {"Y"}, "get");
  b.output("Y");
  CHECK(run_error(b, {{"O", Value::none(Kind::tensor, DType::float32)}}).kind() == ErrorKind::input);
  CHECK(run(b, {{"O", Value::some(Value::of(f32({1}, {5})))}}).at("Y").tensor.to_f64() == std::vector<double>{5});
}

TEST_CASE("Identity passes sequences from version 14 and optionals from 16", "[eval][control]") {
  const Value s = seq({f32({1}, {1})});
  const Value o = Value::some(seq({f32({1}, {2})}));
  for (int opset : {13, 14, 15, 16}) {
    for (const Value* v : {&s, &o}) {
      GraphBuilder b(opset);
      auto* vi = b.graph().add_input();
      vi->set_name("S");
      b.node("Identity", {"S"}, {"Y"}, "id");
      b.output("Y");
      const bool ok = opset >= 16 || (opset >= 14 && v->kind == Kind::sequence);
      INFO(opset << " " << v->describe());
      if (ok) {
        const Value y = run(b, {{"S", *v}}).at("Y");
        CHECK(y.kind == v->kind);
        CHECK(contents(y.unwrapped()) == contents(v->unwrapped()));
      } else {
        CHECK(run_error(b, {{"S", *v}}).kind() == ErrorKind::input);
      }
    }
  }
}

TEST_CASE("an op that takes tensors refuses a sequence naming the node, evaluate returns tensors only", "[eval][control]") {
  GraphBuilder b(13);
  sequence_input(b, "S");
  b.node("Relu", {"S"}, {"Y"}, "relu");
  b.output("Y");
  const Error e = run_error(b, {{"S", seq({f32({1}, {1})})}});
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.node() == "relu");
  CHECK(e.bare_message() == "input 'S' is a sequence; Relu takes tensors");
  GraphBuilder c(13);
  c.input("X", DType::float32, {1});
  c.node("SequenceConstruct", {"X"}, {"S"});
  c.output("S");
  CHECK_THROWS_AS(bnorm::evaluate(c.model(), {{"X", f32({1}, {1})}}), Error);
  CHECK(run_error(c, {{"X", seq({})}}).kind() == ErrorKind::usage);
}
