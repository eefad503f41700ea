// BitCast-26 against bit patterns written out by hand (IEEE 754 encodings,
// two's complement, the float4e2m1 table).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

Tensor bit_cast(const Tensor& x, DType to) {
  return run_node1(26, "BitCast", {x}, int_attrs({{"to", static_cast<int64_t>(to)}}));
}

}  // namespace

TEST_CASE("BitCast-26 keeps every bit of each element, read as the target type", "[eval][elementwise]") {
  // 1.0f is 0x3F800000, -2.0f 0xC0000000.
  const Tensor i = bit_cast(f32({2, 1}, {1.0, -2.0}), DType::int32);
  CHECK(i.dtype == DType::int32);
  CHECK(i.dims == std::vector<int64_t>{2, 1});
  CHECK(i.to_f64() == V{1065353216, -1073741824});
  CHECK(bit_cast(i, DType::float32).to_f64() == V{1.0, -2.0});
  CHECK(bit_cast(f32({}, {1.0}), DType::uint32).to_f64() == V{1065353216});  // a scalar stays a scalar
  CHECK(bit_cast(f32({}, {1.0}), DType::uint32).dims.empty());
  // double 1.0 is 0x3FF0000000000000; float16 1.0 0x3C00; bfloat16 1.0 0x3F80.
  const Tensor l = bit_cast(f64({1}, {1.0}), DType::int64);
  CHECK(l.data<int64_t>()[0] == 4607182418800017408);
  CHECK(bit_cast(tensor_of(DType::float16, {1}, {1.0}), DType::uint16).to_f64() == V{15360});
  CHECK(bit_cast(tensor_of(DType::bfloat16, {1}, {1.0}), DType::int16).to_f64() == V{16256});
  CHECK(bit_cast(tensor_of(DType::uint16, {2}, {15360, 65535}), DType::int16).to_f64() == V{15360, -1});
  CHECK(bit_cast(tensor_of(DType::int8, {2}, {-1, 5}), DType::uint8).to_f64() == V{255, 5});
  // float8e4m3fn 0x38 is 1.0.
  CHECK(bit_cast(tensor_of(DType::uint8, {1}, {0x38}), DType::float8e4m3fn).to_f64() == V{1.0});
  // A NaN's payload survives: 0x7FC00001 there and back.
  const Tensor nan_bits = tensor_of(DType::int32, {1}, {2143289345});
  const Tensor nan = bit_cast(nan_bits, DType::float32);
  uint32_t bits = 0;
  std::memcpy(&bits, nan.bytes.data(), 4);
  CHECK(bits == 0x7FC00001u);
}

TEST_CASE("BitCast-26 reinterprets the 4-bit and 2-bit types' bits and reads a non-zero byte as true",
          "[eval][elementwise]") {
  // int4 -1 is nibble 0xF: uint4 15; uint4 8 is int4 -8; float4e2m1 0b0010 is 1.0, 0b1111 is -6.
  CHECK(bit_cast(tensor_of(DType::int4, {3}, {-1, 7, -8}), DType::uint4).to_f64() == V{15, 7, 8});
  CHECK(bit_cast(tensor_of(DType::uint4, {3}, {8, 15, 3}), DType::int4).to_f64() == V{-8, -1, 3});
  CHECK(bit_cast(tensor_of(DType::uint4, {2}, {2, 15}), DType::float4e2m1).to_f64() == V{1.0, -6.0});
  CHECK(bit_cast(tensor_of(DType::float4e2m1, {1}, {-6.0}), DType::int4).to_f64() == V{-1});
  // uint8 127 is float8e8m0 2^0, 255 its NaN; 2^-127 is code 0.
  const Tensor e = bit_cast(tensor_of(DType::uint8, {2}, {127, 255}), DType::float8e8m0);
  CHECK(e.to_f64()[0] == 1.0);
  CHECK(std::isnan(e.to_f64()[1]));
  CHECK(bit_cast(tensor_of(DType::float8e8m0, {1}, {std::ldexp(1.0, -127)}), DType::int8).to_f64() == V{0});
  // int2 -1 is 0b11: uint2 3; uint2 2 is int2 -2.
  CHECK(bit_cast(tensor_of(DType::int2, {4}, {-2, -1, 0, 1}), DType::uint2).to_f64() == V{2, 3, 0, 1});
  CHECK(bit_cast(tensor_of(DType::uint2, {4}, {0, 1, 2, 3}), DType::int2).to_f64() == V{0, 1, -2, -1});
  REQUIRE_THROWS_AS(bit_cast(tensor_of(DType::int2, {1}, {1}), DType::int4), bnorm::Error);
  const Tensor b = bit_cast(tensor_of(DType::uint8, {3}, {0, 1, 2}), DType::boolean);
  CHECK(b.dtype == DType::boolean);
  CHECK(std::vector<uint8_t>(b.bytes.begin(), b.bytes.end()) == std::vector<uint8_t>{0, 1, 1});
  CHECK(bit_cast(b, DType::int8).to_f64() == V{0, 1, 1});
}

TEST_CASE("BitCast-26 refuses other widths, a missing or unknown `to`, and types bnorm does not hold",
          "[eval][elementwise]") {
  const Tensor x = f32({2}, {1, 2});
  REQUIRE_THROWS_AS(bit_cast(x, DType::int16), bnorm::Error);
  REQUIRE_THROWS_AS(bit_cast(x, DType::float64), bnorm::Error);
  REQUIRE_THROWS_AS(bit_cast(tensor_of(DType::int4, {1}, {1}), DType::int8), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(26, "BitCast", {x}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(26, "BitCast", {x}, int_attrs({{"to", 8}})), bnorm::Error);   // string
  REQUIRE_THROWS_AS(run_node1(26, "BitCast", {x}, int_attrs({{"to", 99}})), bnorm::Error);
  try {
    run_node1(26, "BitCast", {i64({1}, {1})}, int_attrs({{"to", 14}}));  // complex64
    FAIL("complex64 ran");
  } catch (const bnorm::Error& e) {
    CHECK(e.kind() == bnorm::ErrorKind::unsupported);
    CHECK_THAT(e.message(), Catch::Contains("complex64"));
  }
  REQUIRE_THROWS_AS(run_node1(25, "BitCast", {x}, int_attrs({{"to", 6}})), bnorm::Error);  // not before 26
}
