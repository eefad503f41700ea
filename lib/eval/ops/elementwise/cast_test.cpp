// Cast and CastLike: rounding to bfloat16, float8 and float4 (the spec's
// tables), int4/uint4, integer wrapping, and the versions that added types.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor run_cast(int64_t opset, const Tensor& x, DType to, int saturate = -1) {
  GraphBuilder b(opset);
  b.initializer("x", x);
  auto& n = b.node("Cast", {"x"}, {"y"}, "n");
  set_attr(n, "to", static_cast<int64_t>(to));
  if (saturate >= 0) set_attr(n, "saturate", int64_t{saturate});
  b.output("y");
  return bnorm::evaluate(b.model(), {}).at("y");
}

Tensor run_cast_like(int64_t opset, const Tensor& x, DType to) {
  GraphBuilder b(opset);
  b.initializer("x", x);
  b.initializer("like", Tensor(to, {0}));
  b.node("CastLike", {"x", "like"}, {"y"}, "n");
  b.output("y");
  return bnorm::evaluate(b.model(), {}).at("y");
}

Tensor floats(const std::vector<double>& v) {
  return Tensor::from_f64(DType::float32, {static_cast<int64_t>(v.size())}, v);
}

// float -> bfloat16 by the textbook bit trick: add 0x7FFF plus the kept
// lowest bit, keep the upper half (finite values only).
uint16_t bf16_rne(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

std::vector<uint8_t> bytes_of(const Tensor& t) { return t.bytes; }

}  // namespace

TEST_CASE("Cast float to bfloat16 rounds to nearest even, not by truncation", "[eval][cast]") {
  // The conformance inputs of test_cast_FLOAT_to_BFLOAT16, and exact ties.
  const std::vector<double> v = {0.47892547, 0.48033667, 0.49968487, 0.81910545, 0.47031248, 0.816468,
                                 0.21087195, 0.7229038,  1.00390625, 1.01171875, -1.00390625, 3.0e38};
  for (const auto& y : {run_cast(13, floats(v), DType::bfloat16), run_cast_like(15, floats(v), DType::bfloat16)}) {
    REQUIRE(y.dtype == DType::bfloat16);
    for (size_t i = 0; i < v.size(); ++i) {
      CHECK(y.data<uint16_t>()[i] == bf16_rne(static_cast<float>(v[i])));
    }
  }
  // 1 + 2^-8 is a tie between 1 (even) and 1 + 2^-7; 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  const Tensor y = run_cast(13, floats({1.00390625, 1.01171875}), DType::bfloat16);
  CHECK(y.to_f64() == std::vector<double>{1.0, 1.015625});
  const Tensor special = run_cast(13, floats({kNaN, kInf, -kInf}), DType::bfloat16);
  CHECK(std::isnan(special.to_f64()[0]));
  CHECK(special.to_f64()[1] == kInf);
  CHECK(special.to_f64()[2] == -kInf);
}

TEST_CASE("Cast between integers wraps, float to integer truncates toward zero", "[eval][cast]") {
  const Tensor i16 = Tensor::from_f64(DType::int16, {4}, {200, -129, 300, -1});
  CHECK(run_cast(13, i16, DType::int8).to_f64() == std::vector<double>{-56, 127, 44, -1});
  CHECK(run_cast(13, i16, DType::uint8).to_f64() == std::vector<double>{200, 127, 44, 255});
  CHECK(run_cast(13, floats({2.7, -2.7, 0.5}), DType::int32).to_f64() == std::vector<double>{2, -2, 0});
  CHECK(run_cast(13, floats({0.0, -0.0, kNaN, 0.1}), DType::boolean).to_f64() == std::vector<double>{0, 0, 1, 1});
}

TEST_CASE("Cast to float8 follows the spec's tables with and without saturate", "[eval][cast]") {
  // 0.47892547 = 1.9157 * 2^-2 -> 1.875 * 2^-2 (0x2F in e4m3fn); 464 is the
  // tie between 448 (max, mantissa 110) and 480: even gives 448; 465 goes past.
  const Tensor x = floats({0.47892547, 464, 465, 1e6, kInf, -kInf, kNaN, -0.0, 0.001953125, 0.0009765625});
  CHECK(bytes_of(run_cast(19, x, DType::float8e4m3fn)) ==
        std::vector<uint8_t>{0x2F, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0x80, 0x01, 0x00});
  CHECK(bytes_of(run_cast(19, x, DType::float8e4m3fn, 0)) ==
        std::vector<uint8_t>{0x2F, 0x7E, 0x7F, 0x7F, 0x7F, 0xFF, 0x7F, 0x80, 0x01, 0x00});
  // fnuz: bias 8, max 240 (0x7F), NaN 0x80, no -0.
  CHECK(bytes_of(run_cast(19, x, DType::float8e4m3fnuz)) ==
        std::vector<uint8_t>{0x37, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0x80, 0x00, 0x02, 0x01});
  CHECK(bytes_of(run_cast(19, x, DType::float8e4m3fnuz, 0)) ==
        std::vector<uint8_t>{0x37, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x02, 0x01});
  // e5m2: max 57344 (0x7B); 61440 ties with 65536 (even) which overflows.
  const Tensor y = floats({61440, 1e6, -kInf, 1.25, -0.0});
  CHECK(bytes_of(run_cast(19, y, DType::float8e5m2)) == std::vector<uint8_t>{0x7B, 0x7B, 0xFB, 0x3D, 0x80});
  CHECK(bytes_of(run_cast(19, y, DType::float8e5m2, 0)) == std::vector<uint8_t>{0x7C, 0x7C, 0xFC, 0x3D, 0x80});
  CHECK(bytes_of(run_cast(19, y, DType::float8e5m2fnuz, 0)) == std::vector<uint8_t>{0x80, 0x80, 0x80, 0x41, 0x00});
}

TEST_CASE("Cast from float8 and float4 decodes exactly", "[eval][cast]") {
  Tensor f8(DType::float8e4m3fn, {4});
  f8.bytes = {0x7E, 0x08, 0xFF, 0x01};
  const auto v = run_cast(19, f8, DType::float32).to_f64();
  CHECK(v[0] == 448);
  CHECK(v[1] == std::ldexp(1.0, -6));
  CHECK(std::isnan(v[2]));
  CHECK(v[3] == std::ldexp(1.0, -9));
  Tensor e5(DType::float8e5m2, {2});
  e5.bytes = {0x7C, 0xFE};
  const auto w = run_cast(19, e5, DType::float64).to_f64();
  CHECK(w[0] == kInf);
  CHECK(std::isnan(w[1]));
  Tensor f4(DType::float4e2m1, {8});
  f4.bytes = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(run_cast(23, f4, DType::float32).to_f64() == std::vector<double>{0, 0.5, 1, 1.5, 2, 3, 4, 6});
}

TEST_CASE("Cast to float4e2m1 rounds to nearest even and always saturates", "[eval][cast]") {
  // 0.25 ties 0 / 0.5 -> 0; 0.75 ties 0.5 / 1 -> 1; 5 ties 4 / 6 -> 4; NaN -> 0x8 as ONNX's reference.
  const Tensor y = run_cast(23, floats({0.25, 0.75, 5, -3.5, 9, -kInf, kNaN, -0.0}), DType::float4e2m1);
  CHECK(bytes_of(y) == std::vector<uint8_t>{0x0, 0x2, 0x6, 0xE, 0x7, 0xF, 0x8, 0x8});
}

TEST_CASE("Cast to int4 and uint4 keeps the low four bits", "[eval][cast]") {
  const Tensor x = floats({-9, -8, 7, 8, 15, 2.9});
  CHECK(run_cast(21, x, DType::int4).to_f64() == std::vector<double>{7, -8, 7, -8, -1, 2});
  CHECK(run_cast(21, x, DType::uint4).to_f64() == std::vector<double>{7, 8, 7, 8, 15, 2});
  const Tensor i4 = Tensor::from_f64(DType::int4, {3}, {-8, -1, 7});
  CHECK(run_cast(21, i4, DType::int8).to_f64() == std::vector<double>{-8, -1, 7});
  CHECK(run_cast(21, i4, DType::uint4).to_f64() == std::vector<double>{8, 15, 7});
}

TEST_CASE("Cast to int2 and uint2 (25) keeps the low two bits, as ONNX's data", "[eval][cast]") {
  // ONNX's test_cast_FLOAT_to_INT2: -3 -> 1, 2 -> -2, 3 -> -1; floats truncate first (2.7 -> 2, -2.7 -> -2).
  const Tensor x = floats({-3, -2, -1, 0, 1, 2, 3, 2.7, -2.7});
  CHECK(run_cast(25, x, DType::int2).to_f64() == std::vector<double>{1, -2, -1, 0, 1, -2, -1, -2, -2});
  CHECK(run_cast(25, x, DType::uint2).to_f64() == std::vector<double>{1, 2, 3, 0, 1, 2, 3, 2, 2});
  CHECK(run_cast_like(25, x, DType::int2).dtype == DType::int2);
  const Tensor i2 = Tensor::from_f64(DType::int2, {4}, {-2, -1, 0, 1});
  CHECK(run_cast(25, i2, DType::int8).to_f64() == std::vector<double>{-2, -1, 0, 1});
  CHECK(run_cast(25, i2, DType::float32).to_f64() == std::vector<double>{-2, -1, 0, 1});
  CHECK(run_cast(25, i2, DType::uint2).to_f64() == std::vector<double>{2, 3, 0, 1});
  CHECK(run_cast(28, Tensor::from_f64(DType::uint8, {2}, {7, 250}), DType::uint2).to_f64() == std::vector<double>{3, 2});
}

TEST_CASE("Cast refuses types before the version that added them, and types bnorm cannot hold", "[eval][cast]") {
  const Tensor x = floats({1.0});
  REQUIRE_THROWS_AS(run_cast(13, x, DType::float8e4m3fn), bnorm::Error);
  REQUIRE_THROWS_AS(run_cast(19, x, DType::int4), bnorm::Error);
  REQUIRE_THROWS_AS(run_cast(21, x, DType::float4e2m1), bnorm::Error);
  REQUIRE_THROWS_AS(run_cast_like(15, x, DType::float8e5m2), bnorm::Error);
  REQUIRE_THROWS_AS(run_cast(24, x, DType::int2), bnorm::Error);  // int2 and uint2 are Cast-25's
  REQUIRE_THROWS_AS(run_cast_like(24, x, DType::uint2), bnorm::Error);
  REQUIRE_THROWS_AS(run_cast(23, x, DType::float8e8m0), bnorm::Error);  // float8e8m0 is Cast-24's
  for (int64_t to : {8, 14}) {  // string, complex64
    try {
      run_cast(23, x, static_cast<DType>(to));
      FAIL("Cast to " << to << " was not refused");
    } catch (const bnorm::Error& e) {
      CHECK(e.kind() == bnorm::ErrorKind::unsupported);
    }
  }
  REQUIRE_THROWS_AS(run_cast(23, x, static_cast<DType>(99)), bnorm::Error);
}
