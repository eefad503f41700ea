// Conv and ConvTranspose on hostile attributes: found by fuzz_fold
// (tests/fuzz_regressions/fold/), whose verify step runs the pair in float64.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "eval/evaluator.h"
#include "eval/test_graph.h"

using bnorm::DType;
using bnorm::Error;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;

namespace {

std::string conv_error(const std::string& op, const std::string& attr, std::vector<int64_t> values) {
  GraphBuilder b(15);
  b.input("X", DType::float64, {1, 1, 4, 4});
  b.initializer("W", Tensor(DType::float64, {1, 1, 2, 2}));
  auto& n = b.node(op, {"X", "W"}, {"Y"}, "conv");
  auto* a = n.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
  b.output("Y");
  try {
    bnorm::evaluate(b.model(), {{"X", Tensor(DType::float64, {1, 1, 4, 4})}});
  } catch (const Error& e) {
    CHECK(e.node() == "conv");
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("Conv and ConvTranspose refuse outputs over the tensor byte limit before allocating them") {
  // 2^30 x 2^30 doubles: the padded output alone would be 8 EiB.
  const int64_t p = int64_t{1} << 30;
  CHECK_THAT(conv_error("Conv", "pads", {p, p, p, p}), Catch::Contains("the output of Conv") &&
                                                           Catch::Contains("limit of 4294967296 bytes"));
  CHECK_THAT(conv_error("ConvTranspose", "strides", {p, p}), Catch::Contains("the output of ConvTranspose"));
}

TEST_CASE("Conv refuses zero strides or dilations and negative or huge pads") {
  for (const std::string op : {"Conv", "ConvTranspose"}) {
    CHECK_THAT(conv_error(op, "strides", {0, 1}), Catch::Contains("strides and dilations must be 1"));
    CHECK_THAT(conv_error(op, "dilations", {1, -1}), Catch::Contains("strides and dilations must be 1"));
    CHECK_THAT(conv_error(op, "pads", {0, 0, -1, 0}), Catch::Contains("pads and output_padding 0"));
    CHECK_THAT(conv_error(op, "pads", {0, 0, INT64_MAX, 0}), Catch::Contains("pads and output_padding 0"));
  }
}

TEST_CASE("Conv pads around an empty X give the bias-free zeros of the padded output") {
  GraphBuilder b(15);
  b.input("X", DType::float32, {1, 1, 0, 0});
  b.initializer("W", Tensor::from_f64(DType::float32, {1, 1, 2, 2}, {1, 2, 3, 4}));
  auto& n = b.node("Conv", {"X", "W"}, {"Y"}, "conv");
  auto* a = n.add_attribute();
  a->set_name("pads");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : {1, 1, 1, 1}) a->add_ints(v);
  b.output("Y");
  const auto y = bnorm::evaluate(b.model(), {{"X", Tensor(DType::float32, {1, 1, 0, 0})}}).at("Y");
  CHECK(y.dims == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(y.to_f64() == std::vector<double>{0});
}
