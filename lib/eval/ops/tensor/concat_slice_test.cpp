// Data-movement ops at the versions where their inputs moved from
// attributes to tensors: Shape, ConstantOfShape, Concat, Split, Gather,
// Slice, Tile, Expand, Pad.
#include <catch2/catch.hpp>

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

void set_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

Tensor ints(std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::from_f64(DType::int64, std::move(dims), v);
}

Tensor floats(std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::from_f64(DType::float32, std::move(dims), v);
}

// 0, 1, ..., n - 1 as float of shape `dims`.
Tensor iota(std::vector<int64_t> dims) {
  std::vector<double> v(static_cast<size_t>(bnorm::checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return floats(std::move(dims), v);
}

// Runs one `op` node at `opset` on constant inputs (an empty tensor name
// skips an optional input) and returns its outputs.
std::vector<Tensor> run(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs, int outputs = 1,
                        const Attrs& attrs = {}) {
  GraphBuilder b(opset);
  std::vector<std::string> in, out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(inputs[i].dtype == DType::undefined ? "" : "in" + std::to_string(i));
    if (!in.back().empty()) b.initializer(in.back(), inputs[i]);
  }
  for (int i = 0; i < outputs; ++i) out.push_back("out" + std::to_string(i));
  auto& n = b.node(op, in, out, "n");
  if (attrs) attrs(n);
  for (const auto& o : out) b.output(o);
  const auto r = bnorm::evaluate(b.model(), {});
  std::vector<Tensor> got;
  for (const auto& o : out) got.push_back(r.at(o));
  return got;
}

Tensor run1(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  return run(opset, op, inputs, 1, attrs)[0];
}

}  // namespace

TEST_CASE("Shape gives every dim, or dims[start:end] from version 15 with clamped negative bounds", "[eval][ops]") {
  const Tensor x = iota({2, 3, 4, 5});
  CHECK(run1(13, "Shape", {x}).to_f64() == std::vector<double>{2, 3, 4, 5});
  CHECK(run1(15, "Shape", {x}, [](auto& n) { set_attr(n, "start", int64_t{-3}); }).to_f64() ==
        std::vector<double>{3, 4, 5});
  CHECK(run1(15, "Shape", {x}, [](auto& n) {
          set_attr(n, "start", int64_t{1});
          set_attr(n, "end", int64_t{-1});
        }).to_f64() == std::vector<double>{3, 4});
  CHECK(run1(15, "Shape", {x}, [](auto& n) { set_attr(n, "end", int64_t{10}); }).dims == std::vector<int64_t>{4});
  CHECK(run1(15, "Shape", {x}, [](auto& n) { set_attr(n, "start", int64_t{3}); set_attr(n, "end", int64_t{1}); })
            .dims == std::vector<int64_t>{0});
}

TEST_CASE("ConstantOfShape fills with its value attribute's type, float 0 without one", "[eval][ops]") {
  const Tensor z = run1(9, "ConstantOfShape", {ints({2}, {2, 3})});
  CHECK(z.dtype == DType::float32);
  CHECK(z.to_f64() == std::vector<double>(6, 0.0));
  const Tensor v = run1(9, "ConstantOfShape", {ints({3}, {1, 0, 4})}, [](auto& n) {
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    bnorm::encode_tensor(ints({1}, {7}), a->mutable_t());
  });
  CHECK(v.dtype == DType::int64);
  CHECK(v.dims == std::vector<int64_t>{1, 0, 4});
}

TEST_CASE("Concat joins along a negative axis and Split cuts by attribute, input or equal parts", "[eval][ops]") {
  const Tensor c = run1(13, "Concat", {iota({2, 1}), iota({2, 2})}, [](auto& n) { set_attr(n, "axis", int64_t{-1}); });
  CHECK(c.dims == std::vector<int64_t>{2, 3});
  CHECK(c.to_f64() == std::vector<double>{0, 0, 1, 1, 2, 3});
  // Concat-1 defaults to axis 1.
  CHECK(run1(1, "Concat", {iota({1, 2}), iota({1, 2})}).dims == std::vector<int64_t>{1, 4});

  const auto by_attr = run(11, "Split", {iota({5, 2})}, 2, [](auto& n) { set_ints(n, "split", {2, 3}); });
  CHECK(by_attr[1].to_f64() == std::vector<double>{4, 5, 6, 7, 8, 9});
  const auto by_input = run(13, "Split", {iota({2, 4}), ints({2}, {1, 3})}, 2, [](auto& n) { set_attr(n, "axis", int64_t{1}); });
  CHECK(by_input[0].to_f64() == std::vector<double>{0, 4});
  CHECK(by_input[1].dims == std::vector<int64_t>{2, 3});
  const auto equal = run(13, "Split", {iota({6})}, 3);
  CHECK(equal[2].to_f64() == std::vector<double>{4, 5});
}

TEST_CASE("Gather takes any axis and negative indices, out of range is an input error", "[eval][ops]") {
  const Tensor x = iota({2, 3});
  const Tensor g = run1(13, "Gather", {x, ints({2, 2}, {-1, 0, 1, 1})}, [](auto& n) { set_attr(n, "axis", int64_t{1}); });
  CHECK(g.dims == std::vector<int64_t>{2, 2, 2});
  CHECK(g.to_f64() == std::vector<double>{2, 0, 1, 1, 5, 3, 4, 4});
  // A scalar index drops the axis (the Shape -> Gather -> Unsqueeze idiom).
  const Tensor s = run1(9, "Gather", {ints({4}, {1, 3, 240, 320}), ints({}, {2})});
  CHECK(s.dims.empty());
  CHECK(s.to_f64() == std::vector<double>{240});
  try {
    run1(13, "Gather", {x, ints({1}, {2})});
    FAIL("no error");
  } catch (const bnorm::Error& e) {
    CHECK(e.kind() == bnorm::ErrorKind::input);
  }
}

TEST_CASE("Slice reads attributes before 10 and inputs after, clamping and stepping both ways", "[eval][ops]") {
  const Tensor x = iota({3, 4});
  const Tensor a = run1(9, "Slice", {x}, [](auto& n) {
    set_ints(n, "starts", {1});
    set_ints(n, "ends", {1000});
    set_ints(n, "axes", {1});
  });
  CHECK(a.to_f64() == std::vector<double>{1, 2, 3, 5, 6, 7, 9, 10, 11});
  // No axes: the first len(starts) axes.
  CHECK(run1(1, "Slice", {x}, [](auto& n) {
          set_ints(n, "starts", {-1, 0});
          set_ints(n, "ends", {3, 2});
        }).to_f64() == std::vector<double>{8, 9});
  // Reversed rows and every other column from the end.
  const Tensor r = run1(13, "Slice", {x, ints({2}, {-1, 3}), ints({2}, {INT64_MIN, -5}), ints({2}, {0, -1}),
                                      ints({2}, {-1, -2})});
  CHECK(r.dims == std::vector<int64_t>{3, 2});
  CHECK(r.to_f64() == std::vector<double>{11, 9, 7, 5, 3, 1});
  // Optional axes skipped, steps given.
  const Tensor s = run1(11, "Slice", {x, ints({1}, {0}), ints({1}, {3}), Tensor(), ints({1}, {2})});
  CHECK(s.dims == std::vector<int64_t>{2, 4});
  CHECK(run1(10, "Slice", {x, ints({1}, {5}), ints({1}, {9}), ints({1}, {1})}).dims == std::vector<int64_t>{3, 0});
}

TEST_CASE("Tile repeats per axis from 6 and along one axis before", "[eval][ops]") {
  const Tensor x = iota({2});
  CHECK(run1(13, "Tile", {iota({1, 2}), ints({2}, {2, 2})}).to_f64() == std::vector<double>{0, 1, 0, 1, 0, 1, 0, 1});
  CHECK(run1(1, "Tile", {x, ints({}, {3}), ints({}, {0})}).to_f64() == std::vector<double>{0, 1, 0, 1, 0, 1});
}

TEST_CASE("Expand broadcasts both ways", "[eval][ops]") {
  const Tensor e = run1(13, "Expand", {iota({3, 1}), ints({3}, {2, 1, 2})});
  CHECK(e.dims == std::vector<int64_t>{2, 3, 2});
  CHECK(e.to_f64() == std::vector<double>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
}

TEST_CASE("Pad takes paddings (1), pads (2) or inputs (11) in constant, edge and reflect modes", "[eval][ops]") {
  const Tensor x = iota({1, 3});
  CHECK(run1(1, "Pad", {x}, [](auto& n) {
          set_ints(n, "paddings", {0, 1, 0, 2});
          set_attr(n, "value", 9.0f);
        }).to_f64() == std::vector<double>{9, 0, 1, 2, 9, 9});
  CHECK(run1(2, "Pad", {x}, [](auto& n) {
          set_ints(n, "pads", {0, 2, 0, 2});
          set_string(n, "mode", "reflect");
        }).to_f64() == std::vector<double>{2, 1, 0, 1, 2, 1, 0});
  CHECK(run1(11, "Pad", {x, ints({4}, {0, 2, 0, 1})}, [](auto& n) { set_string(n, "mode", "edge"); }).to_f64() ==
        std::vector<double>{0, 0, 0, 1, 2, 2});
  // A constant input, and a negative pad that crops.
  CHECK(run1(13, "Pad", {x, ints({4}, {0, -1, 1, 0}), floats({}, {5})}).to_f64() ==
        std::vector<double>{1, 2, 5, 5});
  const Tensor i = run1(13, "Pad", {ints({2}, {3, 4}), ints({2}, {1, 0})});
  CHECK(i.dtype == DType::int64);
  CHECK(i.to_f64() == std::vector<double>{0, 3, 4});
}
