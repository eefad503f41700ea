#include "model/infer.h"

#include <catch2/catch.hpp>

#include "eval/test_graph.h"

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;

namespace {

// Whether inference gave `name` a shape (in value_info or on the graph output).
bool has_value_info(const onnx::ModelProto& m, const std::string& name) {
  auto shaped = [&](const onnx::ValueInfoProto& v) {
    return v.name() == name && v.type().has_tensor_type() && v.type().tensor_type().has_shape();
  };
  for (const auto& v : m.graph().value_info())
    if (shaped(v)) return true;
  for (const auto& v : m.graph().output())
    if (shaped(v)) return true;
  return false;
}

void add_ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

}  // namespace

// Found by fuzz_inspect (tests/fuzz_regressions/inspect/, and CI's fuzz
// smoke run): ONNX 1.12's Conv/ConvTranspose inference reads W's dims
// without checking W's rank (a null dereference) and its Conv/pool
// inference divides by strides. Both used to kill the process.
TEST_CASE("ONNX's inference fails, without crashing, on a Conv or ConvTranspose whose W rank is not X's") {
  for (const std::string op : {"Conv", "ConvTranspose"}) {
    for (const std::vector<int64_t>& wdims : {std::vector<int64_t>{6}, {4, 4, 3}, {4, 4, 3, 3, 3}}) {
      GraphBuilder b(14);  // IR 8: initializers are typed without being inputs
      b.input("x", DType::float32, {1, 4, 6, 6});
      b.initializer("w", Tensor(DType::float32, wdims));
      b.node(op, {"x", "w"}, {"y"}, "c");
      b.node("Relu", {"x"}, {"r"}, "relu");
      b.output("y");
      b.output("r");
      const auto inferred = bnorm::with_inferred_shapes(b.model().proto);
      CHECK_FALSE(has_value_info(inferred, "y"));
      CHECK(has_value_info(inferred, "r"));  // the rest of the graph is still inferred
    }
  }
}

TEST_CASE("the guard sees ranks that inference derives mid-graph, not only declared ones") {
  GraphBuilder b(14);  // IR 8: initializers are typed without being inputs
  b.input("x", DType::float32, {1, 4, 6, 6});
  b.initializer("w", Tensor(DType::float32, {4, 4, 3, 3}));
  b.initializer("shape", Tensor::from_f64(DType::int64, {1}, {144}));
  b.node("Reshape", {"w", "shape"}, {"w1"}, "flatten_w");
  b.node("ConvTranspose", {"x", "w1"}, {"y"}, "c");
  b.output("y");
  const auto inferred = bnorm::with_inferred_shapes(b.model().proto);
  CHECK(has_value_info(inferred, "w1"));
  CHECK_FALSE(has_value_info(inferred, "y"));
}

TEST_CASE("a stride of 0 fails ONNX's Conv and pool inference instead of dividing by zero") {
  for (const std::string op : {"Conv", "MaxPool", "AveragePool", "LpPool"}) {
    GraphBuilder b(14);  // IR 8: initializers are typed without being inputs
    b.input("x", DType::float32, {1, 4, 6, 6});
    std::vector<std::string> in{"x"};
    if (op == "Conv") {
      b.initializer("w", Tensor(DType::float32, {4, 4, 3, 3}));
      in.push_back("w");
    }
    auto& n = b.node(op, in, {"y"}, "c");
    add_ints(n, "strides", {0, 1});
    if (op != "Conv") add_ints(n, "kernel_shape", {3, 3});
    b.output("y");
    CHECK_FALSE(has_value_info(bnorm::with_inferred_shapes(b.model().proto), "y"));
  }
}

TEST_CASE("a valid Conv and ConvTranspose are still inferred through the guard") {
  for (const std::string op : {"Conv", "ConvTranspose"}) {
    GraphBuilder b(14);  // IR 8: initializers are typed without being inputs
    b.input("x", DType::float32, {1, 4, 6, 6});
    b.initializer("w", Tensor(DType::float32, {4, 4, 3, 3}));
    b.node(op, {"x", "w"}, {"y"}, "c");
    b.output("y");
    CHECK(has_value_info(bnorm::with_inferred_shapes(b.model().proto), "y"));
  }
}
