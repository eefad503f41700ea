#include "eval/run/random_inputs.h"

#include <catch2/catch.hpp>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::test::GraphBuilder;

TEST_CASE("random inputs follow the declared type and shape, the same for the same seed") {
  GraphBuilder b(15);
  b.input("X", DType::float32, {2, 3});
  b.input("M", DType::boolean, {4});
  const auto a = bnorm::random_inputs(b.model(), 5, {});
  const auto again = bnorm::random_inputs(b.model(), 5, {});
  REQUIRE(a.size() == 2);
  CHECK(a.at("X").dims == std::vector<int64_t>{2, 3});
  CHECK(a.at("X").dtype == DType::float32);
  CHECK(a.at("M").byte_size() == 4);
  CHECK(a.at("X").bytes == again.at("X").bytes);
  for (double v : a.at("X").to_f64()) CHECK((v >= -1 && v < 1));
}

TEST_CASE("random inputs over the tensor byte limit are an Error, not an allocation") {
  GraphBuilder b(15);
  // 2^40 floats, 4 TiB: declared, never allocated.
  b.input("X", DType::float32, {int64_t{1} << 20, int64_t{1} << 20});
  try {
    bnorm::random_inputs(b.model(), 0, {});
    FAIL("expected a bnorm::Error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    CHECK_THAT(e.message(), Catch::Contains("exceed the limit") && Catch::Contains("input 'X'"));
  }
  const bnorm::TensorByteLimit lowered(4 * 16);
  GraphBuilder small(15);
  small.input("X", DType::float32, {16});
  CHECK(bnorm::random_inputs(small.model(), 0, {}).at("X").numel() == 16);
  small.input("Y", DType::float32, {17});
  CHECK_THROWS_AS(bnorm::random_inputs(small.model(), 0, {}), Error);
}

TEST_CASE("an op output over the tensor byte limit is an Error naming the node") {
  GraphBuilder b(15);
  bnorm::Tensor shape(DType::int64, {2});
  shape.data<int64_t>()[0] = int64_t{1} << 20;
  shape.data<int64_t>()[1] = int64_t{1} << 20;
  b.initializer("shape", shape);
  b.node("ConstantOfShape", {"shape"}, {"Y"}, "big");
  b.output("Y");
  try {
    bnorm::evaluate(b.model(), {});
    FAIL("expected a bnorm::Error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    CHECK(e.node() == "big");
    CHECK_THAT(e.message(), Catch::Contains("limit of 4294967296 bytes"));
  }
}
