// fp16_risks on hand-made parameters: each check tripped by values just
// past its threshold, and left alone by values just inside it.
#include "transforms/fp16_risk.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "support/test_graph.h"

using namespace bnorm;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;

namespace {

Tensor f32(const std::vector<int64_t>& dims, const std::vector<double>& v) {
  return Tensor::from_f64(DType::float32, dims, v);
}

// x [1, 4, 2] -> BatchNormalization(s, B, mean, var, epsilon) -> y, opset 15.
Model bn(const std::vector<double>& scale, const std::vector<double>& var, float epsilon) {
  GraphBuilder g(15);
  g.input("x", DType::float32, {1, 4, 2});
  set_attr(g.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bn1"), "epsilon", epsilon);
  g.initializer("s", f32({4}, scale));
  g.initializer("B", f32({4}, {0, 0, 0, 0}));
  g.initializer("m", f32({4}, {0, 0, 0, 0}));
  g.initializer("v", f32({4}, var));
  g.output("y");
  return g.model();
}

// x [2, 4] -> LayerNormalization(s) -> y, opset 17.
Model ln(const std::vector<double>& scale) {
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 4});
  g.node("LayerNormalization", {"x", "s"}, {"y"}, "ln1");
  g.initializer("s", f32({4}, scale));
  g.output("y");
  return g.model();
}

std::vector<Fp16Risk> of(const std::vector<Fp16Risk>& all, const std::string& check) {
  std::vector<Fp16Risk> out;
  for (const auto& r : all)
    if (r.check == check) out.push_back(r);
  return out;
}

}  // namespace

TEST_CASE("fp16_risks: variances above 65504 are reported, those from 65520 on as inf, 65504 itself is not",
          "[fp16_risk]") {
  const auto risks = fp16_risks(bn({1, 1, 1, 1}, {1e5, 70000, 65510, 65504}, 1e-5f));
  REQUIRE(risks.size() == 1);
  const auto& r = risks[0];
  CHECK(r.check == "overflow");
  CHECK(r.node == "bn1");
  CHECK(r.op == "BatchNormalization");
  CHECK(r.node_index == 0);
  CHECK(r.input == "input_var");
  CHECK(r.what == "3 of 4 input_var values are above float16's largest 65504 (up to 1e+05); 2 of them become inf");
  CHECK_THAT(r.advice, Catch::Contains("bnorm fold"));
  CHECK(fp16_risks(bn({1, 1, 1, 1}, {65504, -65504, 1, 0}, 1e-5f)).empty());
}

TEST_CASE("fp16_risks: an epsilon that rounds to 0 in float16, one below its subnormals, and the usual ones",
          "[fp16_risk]") {
  const auto zero = fp16_risks(bn({1, 1, 1, 1}, {1, 1, 1, 1}, 1e-8f));  // below 2^-25: rounds to 0
  REQUIRE(zero.size() == 1);
  CHECK(zero[0].check == "epsilon_zero");
  CHECK(zero[0].input == "epsilon");
  CHECK(zero[0].what == "epsilon 1e-08 rounds to 0 in float16: an input of zero variance divides by 0");
  const auto tiny = fp16_risks(bn({1, 1, 1, 1}, {1, 1, 1, 1}, 4e-8f));  // between 2^-25 and 2^-24: becomes 2^-24
  REQUIRE(tiny.size() == 1);
  CHECK(tiny[0].check == "epsilon_tiny");
  CHECK(tiny[0].what == "epsilon 4e-08 is below float16's smallest subnormal and becomes 5.96e-08");
  for (float eps : {1e-5f, 6e-8f, 0.0f, 1e-3f}) {
    INFO(eps);
    CHECK(fp16_risks(bn({1, 1, 1, 1}, {1, 1, 1, 1}, eps)).empty());
  }
}

TEST_CASE("fp16_risks: scales that are float16 subnormals, some rounding to 0, the smallest normal is fine",
          "[fp16_risk]") {
  const auto risks = fp16_risks(ln({1e-5, -1e-8, 1.0, 6.2e-5}));
  REQUIRE(risks.size() == 1);
  CHECK(risks[0].check == "subnormal_scale");
  CHECK(risks[0].node == "ln1");
  CHECK(risks[0].input == "Scale");
  CHECK_THAT(risks[0].what, Catch::StartsWith("2 of 4 Scale values are float16 subnormals (below 6.1e-05): they lose "
                                              "precision, 1 round to 0"));
  CHECK(fp16_risks(ln({std::ldexp(1.0, -14), 0.0, -1.0, 60000})).empty());
  // A subnormal variance is no scale: not reported.
  CHECK(fp16_risks(bn({1, 1, 1, 1}, {1e-6, 1, 1, 1}, 1e-3f)).empty());
}

TEST_CASE("fp16_risks with inputs: a LayerNormalization row whose sum of squares passes 65504", "[fp16_risk]") {
  const Model m = ln({1, 1, 1, 1});
  // Row 2: 40000 + 16900 + 1 + 4 = 56905, under 65504; with -200 for -130: 80005, over.
  const std::map<std::string, Tensor> under{{"x", f32({2, 4}, {1, 2, 3, 4, 200, -130, 1, 2})}};
  CHECK(of(fp16_risks(m, &under), "sum_of_squares").empty());
  const std::map<std::string, Tensor> over{{"x", f32({2, 4}, {1, 2, 3, 4, 200, -200, 1, 2})}};
  const auto risks = fp16_risks(m, &over);
  REQUIRE(risks.size() == 1);
  CHECK(risks[0].check == "sum_of_squares");
  CHECK(risks[0].input == "X");
  CHECK_THAT(risks[0].what, Catch::StartsWith("the sum of x^2 over one normalized group of 4 elements reaches 80005 "
                                              "(max |x| 200)"));
  CHECK_THAT(risks[0].advice, Catch::Contains("stash_type"));
  CHECK(fp16_risks(m).empty());  // without inputs nothing is measured
}

TEST_CASE("fp16_risks with inputs: GroupNormalization sums over its group's channels and positions", "[fp16_risk]") {
  GraphBuilder g(21);
  g.input("x", DType::float32, {1, 4, 2});
  set_attr(g.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn1"), "num_groups", int64_t{2});
  g.initializer("s", f32({4}, {1, 1, 1, 1}));
  g.initializer("b", f32({4}, {0, 0, 0, 1e5}));
  g.output("y");
  const Model m = g.model();
  // Group 0 (channels 0-1): 4 x 120^2 = 57600, under; group 1: 4 x 130^2 = 67600, over.
  const std::map<std::string, Tensor> x{{"x", f32({1, 4, 2}, {120, 120, -120, 120, 130, 130, 130, -130})}};
  const auto risks = fp16_risks(m, &x);
  REQUIRE(risks.size() == 2);
  CHECK(risks[0].check == "overflow");
  CHECK(risks[0].input == "bias");
  CHECK_THAT(risks[0].advice, Catch::Contains("keep this node in float32"));
  CHECK(risks[1].check == "sum_of_squares");
  CHECK_THAT(risks[1].what, Catch::Contains("group of 4 elements reaches 67600"));
}

TEST_CASE("fp16_risks: RMSNormalization and InstanceNormalization parameters are checked too", "[fp16_risk]") {
  GraphBuilder g(23);
  g.input("x", DType::float32, {1, 2, 3});
  g.node("RMSNormalization", {"x", "s"}, {"y"}, "rms1");
  g.node("InstanceNormalization", {"y", "s2", "b2"}, {"z"}, "in1");
  g.initializer("s", f32({3}, {1, 1e6, 1}));
  g.initializer("s2", f32({2}, {1, 1e-6}));
  g.initializer("b2", f32({2}, {0, 0}));
  g.output("z");
  const auto risks = fp16_risks(g.model());
  REQUIRE(risks.size() == 2);
  CHECK(risks[0].node == "rms1");
  CHECK(risks[0].check == "overflow");
  CHECK(risks[1].node == "in1");
  CHECK(risks[1].check == "subnormal_scale");
}
