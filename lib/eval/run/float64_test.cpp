#include "eval/run/float64.h"

#include <catch2/catch.hpp>

#include "eval/run/evaluator.h"
#include "support/test_graph.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// x float16 [4] -> Cast(float) -> Mul by Constant(value_float 0.1) ->
// Cast(float16) -> Cast(float) -> Add ConstantOfShape([4]) (default: a float
// 0) -> y. In float64 every step is double: no float16 rounding, no float.
Model casts_and_constants() {
  GraphBuilder b(13);
  b.input("x", DType::float16, {4});
  set_attr(b.node("Cast", {"x"}, {"xf"}, "up"), "to", int64_t{1});
  set_attr(b.node("Constant", {}, {"k"}, "k"), "value_float", 0.1f);
  b.node("Mul", {"xf", "k"}, {"m"}, "mul");
  set_attr(b.node("Cast", {"m"}, {"mh"}, "down"), "to", int64_t{10});
  set_attr(b.node("Cast", {"mh"}, {"mf"}, "up2"), "to", int64_t{1});
  b.initializer("shape", tensor_of(DType::int64, {1}, {4}));
  b.node("ConstantOfShape", {"shape"}, {"zeros"}, "zeros");
  b.node("Add", {"mf", "zeros"}, {"y"}, "add");
  b.output("y");
  return b.model();
}

}  // namespace

TEST_CASE("float64 evaluation computes every floating tensor in double, casts included") {
  const Model m = casts_and_constants();
  CHECK(float64_blocker(m).empty());
  const Tensor x = tensor_of(DType::float16, {4}, {0.333251953125, -1.5, 1000.5, 0.0999755859375});
  const auto wide = evaluate_float64(promote_to_float64(m), {{"x", x}});
  const Tensor& y = wide.at("y");
  REQUIRE(y.dtype == DType::float64);
  // The reference: x's float16 values times the float32 value the model
  // stores for 0.1, in double (independent of the evaluator).
  const double k = static_cast<double>(0.1f);
  const std::vector<double> xs = {0.333251953125, -1.5, 1000.5, 0.0999755859375};
  const auto got = y.to_f64();
  for (size_t i = 0; i < xs.size(); ++i) CHECK(got[i] == xs[i] * k);
  // The model as written rounds to float16 on the way: not the same numbers.
  const auto narrow = evaluate(m, {{"x", x}}).at("y");
  CHECK(narrow.dtype == DType::float32);
  CHECK(narrow.to_f64() != got);
  // The original model is untouched by the promotion.
  CHECK(m.proto.graph().input(0).type().tensor_type().elem_type() == static_cast<int>(DType::float16));
}

TEST_CASE("float64 evaluation is refused where a node rounds to integer codes or a type is float8 or 4-bit") {
  {
    GraphBuilder b(13);
    b.input("x", DType::float32, {4});
    b.initializer("s", f32({}, {0.5}));
    b.node("QuantizeLinear", {"x", "s"}, {"q"}, "quant");
    b.output("q");
    const std::string why = float64_blocker(b.model());
    CHECK_THAT(why, Catch::Contains("quant") && Catch::Contains("integer codes"));
  }
  {
    GraphBuilder b(19);
    b.input("x", DType::float32, {4});
    set_attr(b.node("Cast", {"x"}, {"c"}, "to_fp8"), "to", int64_t{17});
    b.output("c");
    CHECK_THAT(float64_blocker(b.model()), Catch::Contains("to_fp8") && Catch::Contains("float8e4m3fn"));
  }
  {
    GraphBuilder b(21);
    b.input("x", DType::float32, {4});
    b.initializer("w", tensor_of(DType::int4, {4}, {1, -2, 3, -4}));
    b.node("Identity", {"x"}, {"y"}, "id");
    b.output("y");
    CHECK_THAT(float64_blocker(b.model()), Catch::Contains("'w'") && Catch::Contains("int4"));
  }
}
