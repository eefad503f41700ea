// Cast and CastLike to and from float8e8m0 (Cast-24): `round_mode` and
// `saturate` through the node, the specials of the spec's table, and the
// version that added the type. Expected codes worked out by hand: code =
// 127 + the exponent of the chosen power of two.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;
using bnorm::test::set_string;
using Bytes = std::vector<uint8_t>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// round_mode "" leaves the attribute out; saturate -1 too.
Tensor run_cast(int64_t opset, const Tensor& x, DType to, const std::string& round_mode = "", int saturate = -1) {
  GraphBuilder b(opset);
  b.initializer("x", x);
  auto& n = b.node("Cast", {"x"}, {"y"}, "n");
  set_attr(n, "to", static_cast<int64_t>(to));
  if (!round_mode.empty()) set_string(n, "round_mode", round_mode);
  if (saturate >= 0) set_attr(n, "saturate", int64_t{saturate});
  b.output("y");
  return bnorm::evaluate(b.model(), {}).at("y");
}

Tensor e8m0(const Bytes& codes) {
  Tensor t(DType::float8e8m0, {static_cast<int64_t>(codes.size())});
  t.bytes = codes;
  return t;
}

// 1.5 (a tie), 1.25, 6 = 1.5 * 4 (a tie), 0.3 in [2^-2, 2^-1), 2^-130 (a
// float subnormal below E8M0_MIN), 0, Inf, NaN, 2^127 (E8M0_MAX), -1.5.
Tensor inputs() {
  return Tensor::from_f64(DType::float32, {10},
                          {1.5, 1.25, 6, 0.3, std::ldexp(1.0, -130), 0, kInf, kNaN, std::ldexp(1.0, 127), -1.5});
}

}  // namespace

TEST_CASE("Cast to float8e8m0 rounds up by default, down or to nearest with ties up, and saturates",
          "[eval][cast][e8m0]") {
  const Tensor x = inputs();
  const Bytes up = {128, 128, 130, 126, 0, 0, 0xFE, 0xFF, 0xFE, 128};
  CHECK(run_cast(24, x, DType::float8e8m0).bytes == up);
  CHECK(run_cast(25, x, DType::float8e8m0, "up", 1).bytes == up);
  CHECK(run_cast(24, x, DType::float8e8m0, "down").bytes == Bytes{127, 127, 129, 125, 0, 0, 0xFE, 0xFF, 0xFE, 127});
  CHECK(run_cast(24, x, DType::float8e8m0, "nearest").bytes ==
        Bytes{128, 127, 130, 125, 0, 0, 0xFE, 0xFF, 0xFE, 128});
}

TEST_CASE("Cast to float8e8m0 with saturate = 0 gives NaN for zero, Inf and values out of range",
          "[eval][cast][e8m0]") {
  const Tensor x = inputs();
  CHECK(run_cast(24, x, DType::float8e8m0, "nearest", 0).bytes ==
        Bytes{128, 127, 130, 125, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 128});
  CHECK(run_cast(24, x, DType::float8e8m0, "up", 0).bytes ==
        Bytes{128, 128, 130, 126, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 128});
}

TEST_CASE("Cast from float8e8m0 is exact, then rounds once to the target", "[eval][cast][e8m0]") {
  // 2^-127, 2^-3, 1, 2^16, 2^127, NaN.
  const Tensor x = e8m0({0, 124, 127, 143, 254, 255});
  const std::vector<double> d = run_cast(24, x, DType::float64).to_f64();
  CHECK(d[0] == std::ldexp(1.0, -127));
  CHECK(d[1] == 0.125);
  CHECK(d[3] == 65536);
  CHECK(d[4] == std::ldexp(1.0, 127));
  CHECK(std::isnan(d[5]));
  const Tensor f = run_cast(24, x, DType::float32);
  CHECK(f.data<uint32_t>()[0] == 0x00400000u);  // a float subnormal, exact
  CHECK(f.data<uint32_t>()[4] == 0x7F000000u);
  const Tensor h = run_cast(24, x, DType::float16);
  CHECK(h.data<uint16_t>()[0] == 0x0000);  // far below float16's smallest subnormal
  CHECK(h.data<uint16_t>()[2] == 0x3C00);
  CHECK(h.data<uint16_t>()[3] == 0x7C00);  // 2^16 overflows float16 to +Inf
  const Tensor bf = run_cast(24, x, DType::bfloat16);
  CHECK(bf.data<uint16_t>()[0] == 0x0040);  // 64 * 2^-133, a bfloat16 subnormal
  CHECK(bf.data<uint16_t>()[4] == 0x7F00);
  CHECK(run_cast(24, e8m0({127, 137}), DType::int32).to_f64() == std::vector<double>{1, 1024});
}

TEST_CASE("CastLike to float8e8m0 takes round_mode and saturate too", "[eval][cast][e8m0]") {
  GraphBuilder b(24);
  b.initializer("x", Tensor::from_f64(DType::float32, {3}, {1.25, 0.0, 3.0}));
  b.initializer("like", e8m0({}));
  auto& n = b.node("CastLike", {"x", "like"}, {"y"}, "n");
  set_string(n, "round_mode", "nearest");
  set_attr(n, "saturate", int64_t{0});
  b.output("y");
  CHECK(bnorm::evaluate(b.model(), {}).at("y").bytes == Bytes{127, 0xFF, 129});
}

TEST_CASE("Cast to float8e8m0 refuses an unknown round_mode and versions before 24", "[eval][cast][e8m0]") {
  const Tensor x = Tensor::from_f64(DType::float32, {1}, {1.0});
  CHECK_THROWS_AS(run_cast(24, x, DType::float8e8m0, "zero"), bnorm::Error);
  CHECK_THROWS_AS(run_cast(24, x, DType::float8e8m0, "UP"), bnorm::Error);
  CHECK_THROWS_AS(run_cast(23, x, DType::float8e8m0), bnorm::Error);
  CHECK_THROWS_AS(run_cast(23, e8m0({127}), DType::float32), bnorm::Error);
  // round_mode only concerns float8e8m0 targets.
  CHECK(run_cast(24, x, DType::float16, "down").data<uint16_t>()[0] == 0x3C00);
}
