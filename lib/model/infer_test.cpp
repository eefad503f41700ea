#include "model/infer.h"

#include <catch2/catch.hpp>

#include "support/test_graph.h"

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

// Found by a sweep of ONNX 1.12's inference over every op and version with
// inputs of rank 0 to 3 (after fuzz_upgrade found Gemm-6): these crashed
// the process. Now inference fails on the node, and the rest of the graph
// is still inferred.
TEST_CASE("ONNX's inference fails, without crashing, on the RNN, GRU, LSTM, Gemm, STFT and Scan nodes that crashed it") {
  struct Case {
    const char* op;
    int64_t opset;
    std::vector<std::vector<int64_t>> dims;
  };
  const Case cases[] = {
      {"RNN", 1, {{}, {}, {}}},           {"RNN", 1, {{2}, {2}, {2}}},     {"GRU", 3, {{}, {2, 2}, {2, 2}}},
      {"GRU", 3, {{2}, {2}, {2}}},        {"LSTM", 1, {{}, {}, {}}},       {"LSTM", 1, {{2}, {2, 2}, {2, 2}}},
      {"Gemm", 6, {{}, {2, 2}, {2}}},     {"Gemm", 6, {{2, 2}, {}, {2}}},  {"STFT", 17, {{}, {}}},
      {"Scan", 9, {{2, 2}}},              {"Scan", 8, {{2, 2}, {}}},
  };
  for (const Case& c : cases) {
    INFO(c.op << "-" << c.opset);
    GraphBuilder b(c.opset);
    std::vector<std::string> in;
    for (size_t k = 0; k < c.dims.size(); ++k) {
      in.push_back("i" + std::to_string(k));
      b.input(in.back(), DType::float32, c.dims[k]);
    }
    b.node(c.op, in, {"y"}, "n");
    b.node("Identity", {"i0"}, {"r"}, "identity");
    b.output("y");
    b.output("r");
    const auto inferred = bnorm::with_inferred_shapes(b.model().proto);
    CHECK_FALSE(has_value_info(inferred, "y"));
    CHECK(has_value_info(inferred, "r"));
  }
}

TEST_CASE("a valid RNN and Gemm are still inferred through the guards") {
  {
    GraphBuilder b(7);
    b.input("x", DType::float32, {5, 2, 3});
    b.input("w", DType::float32, {1, 4, 3});
    b.input("r", DType::float32, {1, 4, 4});
    auto& n = b.node("RNN", {"x", "w", "r"}, {"y"}, "rnn");
    auto* a = n.add_attribute();
    a->set_name("hidden_size");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(4);
    b.output("y");
    CHECK(has_value_info(bnorm::with_inferred_shapes(b.model().proto), "y"));
  }
  {
    GraphBuilder b(6);
    b.input("a", DType::float32, {2, 3});
    b.input("b", DType::float32, {3, 4});
    b.input("c", DType::float32, {2, 4});
    b.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
    b.output("y");
    CHECK(has_value_info(bnorm::with_inferred_shapes(b.model().proto), "y"));
  }
}

