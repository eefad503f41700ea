// Math, logic and reduction ops: the forms that differ by version and the
// int64 arithmetic models use to compute shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;

using Attrs = std::function<void(onnx::NodeProto&)>;

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t e : v) a->add_ints(e);
}

Tensor of(DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::from_f64(t, std::move(dims), v);
}

Tensor floats(std::vector<int64_t> dims, const std::vector<double>& v) { return of(DType::float32, std::move(dims), v); }

// Runs one `op` node at `opset` on constant inputs and returns output 0.
Tensor run1(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  GraphBuilder b(opset);
  std::vector<std::string> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back("in" + std::to_string(i));
    b.initializer(in.back(), inputs[i]);
  }
  auto& n = b.node(op, in, {"out"}, "n");
  if (attrs) attrs(n);
  b.output("out");
  return bnorm::evaluate(b.model(), {}).at("out");
}

}  // namespace

TEST_CASE("a reshape target computed from Shape with int64 arithmetic gives the expected shape", "[eval][ops]") {
  // Shape -> Gather(0) -> Unsqueeze; Shape -> Gather(1,2) -> Mul -> Div -> Sub/Add
  // -> Unsqueeze; Concat -> Reshape, as PyTorch exports x.view(n, -1, 2).
  GraphBuilder b(9);
  b.input("X", DType::float32, {2, 3, 4});
  b.initializer("i0", of(DType::int64, {}, {0}));
  b.initializer("i1", of(DType::int64, {}, {1}));
  b.initializer("i2", of(DType::int64, {}, {2}));
  b.initializer("two", of(DType::int64, {}, {2}));
  b.initializer("three", of(DType::int64, {}, {3}));
  b.node("Shape", {"X"}, {"s"});
  b.node("Gather", {"s", "i0"}, {"n"});
  b.node("Gather", {"s", "i1"}, {"c"});
  b.node("Gather", {"s", "i2"}, {"w"});
  b.node("Mul", {"c", "w"}, {"cw"});       // 12
  b.node("Div", {"cw", "two"}, {"half"});  // 6
  b.node("Sub", {"half", "three"}, {"d"});  // 3
  b.node("Add", {"d", "three"}, {"e"});     // 6
  for (const char* v : {"n", "e", "two"}) {
    auto& u = b.node("Unsqueeze", {v}, {std::string(v) + "_1"});
    set_ints(u, "axes", {0});
  }
  auto& c = b.node("Concat", {"n_1", "e_1", "two_1"}, {"shape"});
  set_attr(c, "axis", int64_t{0});
  b.node("Reshape", {"X", "shape"}, {"Y"});
  b.output("Y");
  b.output("shape");
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  const auto out = bnorm::evaluate(b.model(), {{"X", floats({2, 3, 4}, v)}});
  CHECK(out.at("shape").dtype == DType::int64);
  CHECK(out.at("shape").to_f64() == std::vector<double>{2, 6, 2});
  CHECK(out.at("Y").dims == std::vector<int64_t>{2, 6, 2});
}

TEST_CASE("Sum, Max, Min and Mean take any number of broadcasting inputs", "[eval][ops]") {
  const Tensor a = floats({2, 1}, {1, 5}), b = floats({3}, {2, 3, 4}), c = floats({}, {3});
  CHECK(run1(13, "Sum", {a, b, c}).to_f64() == std::vector<double>{6, 7, 8, 10, 11, 12});
  CHECK(run1(13, "Max", {a, b, c}).to_f64() == std::vector<double>{3, 3, 4, 5, 5, 5});
  CHECK(run1(13, "Min", {a, b}).to_f64() == std::vector<double>{1, 1, 1, 2, 3, 4});
  const std::vector<double> mean = run1(13, "Mean", {a, b, c}).to_f64();
  const std::vector<double> want{6, 7, 8, 10, 11, 12};
  REQUIRE(mean.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(mean[i] == static_cast<double>(static_cast<float>(want[i]) / 3.0f));
  CHECK(run1(6, "Sum", {a}).to_f64() == std::vector<double>{1, 5});
  const Tensor m = run1(13, "Max", {of(DType::int64, {2}, {-7, 9}), of(DType::int64, {2}, {3, 4})});
  CHECK(m.dtype == DType::int64);
  CHECK(m.to_f64() == std::vector<double>{3, 9});
}

TEST_CASE("PRelu broadcasts the slope from 7 and takes one slope per channel before", "[eval][ops]") {
  const Tensor x = floats({1, 2, 2}, {-1, 2, -3, 4});
  CHECK(run1(6, "PRelu", {x, floats({2}, {0.5, 0.25})}).to_f64() == std::vector<double>{-0.5, 2, -0.75, 4});
  CHECK(run1(6, "PRelu", {x, floats({1}, {0.5})}).to_f64() == std::vector<double>{-0.5, 2, -1.5, 4});
  // At 7 a [2] slope aligns with the last axis.
  CHECK(run1(7, "PRelu", {x, floats({2}, {0.5, 0.25})}).to_f64() == std::vector<double>{-0.5, 2, -1.5, 4});
  CHECK(run1(16, "PRelu", {x, floats({2, 1}, {0.5, 0.25})}).to_f64() == std::vector<double>{-0.5, 2, -0.75, 4});
}

TEST_CASE("Neg, Abs, Exp, Log and Pow keep the input type", "[eval][ops]") {
  CHECK(run1(13, "Neg", {of(DType::int64, {2}, {3, -4})}).to_f64() == std::vector<double>{-3, 4});
  CHECK(run1(13, "Abs", {of(DType::int32, {2}, {3, -4})}).to_f64() == std::vector<double>{3, 4});
  const Tensor h = run1(13, "Exp", {of(DType::float16, {2}, {0, 1})});
  CHECK(h.dtype == DType::float16);
  CHECK(h.to_f64()[1] == Approx(std::exp(1.0)).epsilon(1e-3));
  CHECK(run1(13, "Log", {floats({1}, {1})}).to_f64() == std::vector<double>{0});
  const Tensor p = run1(15, "Pow", {of(DType::int64, {3}, {1, 2, 3}), floats({}, {2})});
  CHECK(p.dtype == DType::int64);
  CHECK(p.to_f64() == std::vector<double>{1, 4, 9});
  // Pow-1 aligns B at `axis` with broadcast = 1.
  CHECK(run1(1, "Pow", {floats({2, 2}, {1, 2, 3, 4}), floats({2}, {1, 2})}, [](auto& n) {
          set_attr(n, "broadcast", int64_t{1});
          set_attr(n, "axis", int64_t{0});
        }).to_f64() == std::vector<double>{1, 2, 9, 16});
}

TEST_CASE("LogSoftmax flattens at axis before 13 and works along axis from 13", "[eval][ops]") {
  const Tensor x = floats({2, 2}, {0, 0, 0, 0});
  const double l4 = std::log(0.25), l2 = std::log(0.5);
  const std::vector<double> legacy = run1(11, "LogSoftmax", {x}, [](auto& n) { set_attr(n, "axis", int64_t{0}); }).to_f64();
  const std::vector<double> modern = run1(13, "LogSoftmax", {x}, [](auto& n) { set_attr(n, "axis", int64_t{0}); }).to_f64();
  for (double v : legacy) CHECK(v == Approx(l4));
  for (double v : modern) CHECK(v == Approx(l2));
}

TEST_CASE("comparisons give bool and Where picks with broadcasting", "[eval][ops]") {
  const Tensor a = of(DType::int64, {3}, {1, 2, 3}), b = of(DType::int64, {}, {2});
  const Tensor lt = run1(13, "Less", {a, b});
  CHECK(lt.dtype == DType::boolean);
  CHECK(lt.to_f64() == std::vector<double>{1, 0, 0});
  CHECK(run1(13, "Greater", {a, b}).to_f64() == std::vector<double>{0, 0, 1});
  CHECK(run1(13, "Equal", {a, b}).to_f64() == std::vector<double>{0, 1, 0});
  CHECK(run1(1, "Not", {of(DType::boolean, {2}, {1, 0})}).to_f64() == std::vector<double>{0, 1});
  const Tensor w = run1(16, "Where", {of(DType::boolean, {2, 1}, {1, 0}), floats({3}, {1, 2, 3}), floats({}, {9})});
  CHECK(w.to_f64() == std::vector<double>{1, 2, 3, 9, 9, 9});
}

TEST_CASE("ReduceSum takes axes as an attribute before 13 and as an input from 13", "[eval][ops]") {
  const Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(run1(11, "ReduceSum", {x}, [](auto& n) { set_ints(n, "axes", {-1}); }).to_f64() == std::vector<double>{6, 15});
  const Tensor s = run1(13, "ReduceSum", {x, of(DType::int64, {1}, {0})}, [](auto& n) { set_attr(n, "keepdims", int64_t{0}); });
  CHECK(s.dims == std::vector<int64_t>{3});
  CHECK(s.to_f64() == std::vector<double>{5, 7, 9});
  CHECK(run1(13, "ReduceSum", {x}).to_f64() == std::vector<double>{21});
  CHECK(run1(13, "ReduceMax", {x}, [](auto& n) { set_ints(n, "axes", {0}); }).to_f64() == std::vector<double>{4, 5, 6});
}
