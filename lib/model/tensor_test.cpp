#include "model/tensor.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "support/error_of.h"

using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::Tensor;
using bnorm::test::error_of;

namespace {

Tensor with_bytes(DType t, std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
  Tensor out;
  out.dtype = t;
  out.dims = std::move(dims);
  out.bytes = std::move(bytes);
  return out;
}

uint16_t bits16(double v, DType t) {
  const Tensor x = Tensor::from_f64(t, {}, {v});
  uint16_t b;
  std::memcpy(&b, x.bytes.data(), 2);
  return b;
}

uint32_t bits32(double v) {
  const Tensor x = Tensor::from_f64(DType::float32, {}, {v});
  uint32_t b;
  std::memcpy(&b, x.bytes.data(), 4);
  return b;
}

double f16_value(uint16_t bits) {
  return with_bytes(DType::float16, {}, {uint8_t(bits & 0xFF), uint8_t(bits >> 8)}).to_f64()[0];
}

double bf16_value(uint16_t bits) {
  return with_bytes(DType::bfloat16, {}, {uint8_t(bits & 0xFF), uint8_t(bits >> 8)}).to_f64()[0];
}

}  // namespace

TEST_CASE("dtype sizes, names and floating-ness follow ONNX") {
  struct Row {
    DType t;
    size_t size;
    const char* name;
    bool floating;
  };
  const Row rows[] = {
      {DType::float32, 4, "float", true},   {DType::float64, 8, "double", true},
      {DType::float16, 2, "float16", true}, {DType::bfloat16, 2, "bfloat16", true},
      {DType::int8, 1, "int8", false},      {DType::uint8, 1, "uint8", false},
      {DType::int16, 2, "int16", false},    {DType::uint16, 2, "uint16", false},
      {DType::int32, 4, "int32", false},    {DType::uint32, 4, "uint32", false},
      {DType::int64, 8, "int64", false},    {DType::uint64, 8, "uint64", false},
      {DType::boolean, 1, "bool", false},   {DType::string, 0, "string", false},
      {DType::undefined, 0, "undefined", false},
  };
  for (const auto& r : rows) {
    INFO(r.name);
    CHECK(bnorm::dtype_size(r.t) == r.size);
    CHECK(bnorm::dtype_name(r.t) == r.name);
    CHECK(bnorm::is_floating(r.t) == r.floating);
  }
  // complex64 (14) and unknown values have no size.
  CHECK(bnorm::dtype_size(static_cast<DType>(14)) == 0);
  CHECK(bnorm::dtype_size(static_cast<DType>(99)) == 0);
  CHECK_THAT(bnorm::dtype_name(static_cast<DType>(14)), Catch::Contains("14"));
}

TEST_CASE("a new tensor holds zeroed elements of its shape") {
  const Tensor t(DType::float32, {2, 3}, "W");
  CHECK(t.name == "W");
  CHECK(t.numel() == 6);
  CHECK(t.byte_size() == 24);
  CHECK(t.bytes == std::vector<uint8_t>(24, 0));

  const Tensor scalar(DType::float64, {});
  CHECK(scalar.numel() == 1);
  CHECK(scalar.byte_size() == 8);

  const Tensor empty(DType::int64, {0, 5});
  CHECK(empty.numel() == 0);
  CHECK(empty.byte_size() == 0);
  CHECK(empty.to_f64().empty());
}

TEST_CASE("a tensor cannot be made with negative dims, overflowing dims or a sizeless type") {
  auto e = error_of([] { Tensor(DType::float32, {2, -1}, "W"); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'W'") && Catch::Contains("negative"));

  // 2^61 float elements are 2^63 bytes: the element count fits, the byte count does not.
  e = error_of([] { Tensor(DType::float32, {int64_t{1} << 61}); });
  CHECK(e.kind() == ErrorKind::input);

  e = error_of([] { Tensor(DType::string, {1}, "s"); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("string"));
}

TEST_CASE("a tensor over the byte limit is an Error, not an allocation") {
  using bnorm::max_tensor_bytes;
  CHECK(max_tensor_bytes() == bnorm::kDefaultMaxTensorBytes);
  // 2^31 doubles are 16 GiB, over the default 4 GiB: refused before any allocation.
  auto e = error_of([] { Tensor(DType::float64, {int64_t{1} << 16, int64_t{1} << 15}, "Y"); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'Y' of double") && Catch::Contains("17179869184 bytes") &&
                              Catch::Contains("limit of 4294967296 bytes"));

  const bnorm::TensorByteLimit lowered(64);
  CHECK(max_tensor_bytes() == 64);
  CHECK(Tensor(DType::float64, {8}).byte_size() == 64);
  CHECK_THROWS_AS(Tensor(DType::float64, {9}), Error);
  CHECK_THROWS_AS(Tensor::from_f64(DType::int16, {33}, std::vector<double>(33)), Error);
}

TEST_CASE("the tensor byte limit is restored when its guard goes") {
  {
    const bnorm::TensorByteLimit lowered(1);
    CHECK(bnorm::max_tensor_bytes() == 1);
  }
  CHECK(bnorm::max_tensor_bytes() == bnorm::kDefaultMaxTensorBytes);
  CHECK_THROWS_AS(bnorm::TensorByteLimit(-1), Error);
}

TEST_CASE("checked_buffer_numel counts a working buffer of any element size against the limit") {
  CHECK(bnorm::checked_buffer_numel({4, 8}, 8, "buf") == 32);
  const bnorm::TensorByteLimit lowered(256);
  CHECK(bnorm::checked_buffer_numel({4, 8}, 8, "buf") == 32);
  auto e = error_of([] { bnorm::checked_buffer_numel({4, 8}, 16, "the output of X"); });
  CHECK_THAT(e.message(), Catch::Contains("the output of X: dims [4, 8] need 512 bytes"));
  e = error_of([] { bnorm::checked_buffer_numel({INT64_MAX, 2}, 1, "huge"); });
  CHECK_THAT(e.message(), Catch::Contains("huge") && Catch::Contains("overflow"));
}

TEST_CASE("checked_numel counts elements and refuses negatives, overflow and the limit") {
  using bnorm::checked_numel;
  CHECK(checked_numel({}) == 1);
  CHECK(checked_numel({2, 3, 4}) == 24);
  CHECK(checked_numel({0, 5}) == 0);
  CHECK(checked_numel({INT64_MAX}) == INT64_MAX);
  CHECK(checked_numel({10}, 10) == 10);

  auto e = error_of([] { checked_numel({3, -2}); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("dims [3, -2]") && Catch::Contains("dim 1 is negative"));

  e = error_of([] { checked_numel({int64_t{1} << 32, int64_t{1} << 32}); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("overflow"));
  CHECK_THROWS_AS(checked_numel({INT64_MAX, 2}), Error);
  // A zero dim does not excuse a product that overflows (its strides would).
  CHECK_THROWS_AS(checked_numel({0, INT64_MAX, 2}), Error);

  e = error_of([] { checked_numel({10}, 9); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("limit"));
}

TEST_CASE("shape_str prints dims in brackets") {
  CHECK(bnorm::shape_str({}) == "[]");
  CHECK(bnorm::shape_str({7}) == "[7]");
  CHECK(bnorm::shape_str({2, 3, 4}) == "[2, 3, 4]");
}

TEST_CASE("float16 bit patterns decode exactly") {
  CHECK(f16_value(0x3C00) == 1.0);
  CHECK(f16_value(0xC000) == -2.0);
  CHECK(f16_value(0x7BFF) == 65504.0);
  CHECK(f16_value(0x0001) == std::ldexp(1.0, -24));
  CHECK(f16_value(0x0400) == std::ldexp(1.0, -14));
  CHECK(f16_value(0x3555) == 0.333251953125);
  CHECK(f16_value(0x7C00) == std::numeric_limits<double>::infinity());
  CHECK(f16_value(0xFC00) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(f16_value(0x7E00)));
  const double neg_zero = f16_value(0x8000);
  CHECK(neg_zero == 0.0);
  CHECK(std::signbit(neg_zero));
}

TEST_CASE("bfloat16 bit patterns decode exactly") {
  CHECK(bf16_value(0x3F80) == 1.0);
  CHECK(bf16_value(0xC0A0) == -5.0);
  CHECK(bf16_value(0x7F7F) == std::ldexp(255.0, 120));  // largest finite: (2 - 2^-7) * 2^127
  CHECK(bf16_value(0x0001) == std::ldexp(1.0, -133));
  CHECK(bf16_value(0x7F80) == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(bf16_value(0x7FC0)));
}

TEST_CASE("integer, bool and float elements decode from little-endian bytes") {
  CHECK(with_bytes(DType::int8, {2}, {0x80, 0x7F}).to_f64() == std::vector<double>{-128, 127});
  CHECK(with_bytes(DType::uint8, {2}, {0x00, 0xFF}).to_f64() == std::vector<double>{0, 255});
  CHECK(with_bytes(DType::int16, {2}, {0xFE, 0xFF, 0x2C, 0x01}).to_f64() == std::vector<double>{-2, 300});
  CHECK(with_bytes(DType::uint16, {1}, {0xFF, 0xFF}).to_f64() == std::vector<double>{65535});
  CHECK(with_bytes(DType::int32, {1}, {0x00, 0x00, 0x00, 0x80}).to_f64() == std::vector<double>{-2147483648.0});
  CHECK(with_bytes(DType::uint32, {1}, {0x04, 0x03, 0x02, 0x01}).to_f64() == std::vector<double>{0x01020304});
  CHECK(with_bytes(DType::int64, {1}, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}).to_f64() ==
        std::vector<double>{-1});
  CHECK(with_bytes(DType::uint64, {1}, {0, 0, 0, 0, 0, 0, 0, 0x80}).to_f64() ==
        std::vector<double>{std::ldexp(1.0, 63)});
  CHECK(with_bytes(DType::boolean, {3}, {1, 0, 1}).to_f64() == std::vector<double>{1, 0, 1});
  CHECK(with_bytes(DType::float32, {1}, {0x00, 0x00, 0x20, 0xC0}).to_f64() == std::vector<double>{-2.5});
  CHECK(with_bytes(DType::float64, {1}, {0, 0, 0, 0, 0, 0, 0xE0, 0x3F}).to_f64() == std::vector<double>{0.5});
}

TEST_CASE("from_f64 rounds to float16 once, to nearest, ties to even") {
  const auto f16 = [](double v) { return bits16(v, DType::float16); };
  CHECK(f16(1.0) == 0x3C00);
  CHECK(f16(1.0 + std::ldexp(1.0, -11)) == 0x3C00);      // tie, down to even
  CHECK(f16(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3C02);  // tie, up to even: 1 + 2^-9
  // Just above the tie: rounding through float first would lose the 2^-40
  // and land on the tie, then round down.
  CHECK(f16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)) == 0x3C01);
  CHECK(f16(65504.0) == 0x7BFF);
  CHECK(f16(65519.99) == 0x7BFF);
  CHECK(f16(65520.0) == 0x7C00);  // halfway to 2^16 rounds to even: infinity
  CHECK(f16(-1e6) == 0xFC00);
  CHECK(f16(std::ldexp(1.0, -24)) == 0x0001);
  CHECK(f16(std::ldexp(1.0, -25)) == 0x0000);      // tie between 0 and 2^-24
  CHECK(f16(3 * std::ldexp(1.0, -25)) == 0x0002);  // tie between 2^-24 and 2^-23
  CHECK(f16(-0.0) == 0x8000);
  const uint16_t nan = f16(std::nan(""));
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x03FF) != 0);
}

TEST_CASE("from_f64 rounds to bfloat16 once, to nearest, ties to even") {
  const auto bf16 = [](double v) { return bits16(v, DType::bfloat16); };
  CHECK(bf16(1.0) == 0x3F80);
  CHECK(bf16(-5.0) == 0xC0A0);
  CHECK(bf16(1.0 + std::ldexp(1.0, -8)) == 0x3F80);      // tie, down to even
  CHECK(bf16(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);  // tie, up to even
  CHECK(bf16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)) == 0x3F81);
  CHECK(bf16(1e39) == 0x7F80);
  CHECK(bf16(-1e39) == 0xFF80);
  CHECK(bf16(std::ldexp(255.0, 120)) == 0x7F7F);
}

TEST_CASE("from_f64 rounds to float and keeps double exact") {
  CHECK(bits32(0.1) == 0x3DCCCCCDu);
  CHECK(bits32(1.0 + std::ldexp(1.0, -24)) == 0x3F800000u);      // tie, down to even
  CHECK(bits32(1.0 + 3 * std::ldexp(1.0, -24)) == 0x3F800002u);  // tie, up to even
  CHECK(bits32(1e39) == 0x7F800000u);

  const Tensor d = Tensor::from_f64(DType::float64, {2}, {0.1, -0.0}, "d");
  CHECK(d.name == "d");
  CHECK(d.bytes == std::vector<uint8_t>{0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F,  //
                                        0, 0, 0, 0, 0, 0, 0, 0x80});
}

TEST_CASE("from_f64 stores exact integers in little-endian order") {
  CHECK(Tensor::from_f64(DType::int8, {2}, {-128, 127}).bytes == std::vector<uint8_t>{0x80, 0x7F});
  CHECK(Tensor::from_f64(DType::uint8, {1}, {255}).bytes == std::vector<uint8_t>{0xFF});
  CHECK(Tensor::from_f64(DType::int16, {1}, {-2}).bytes == std::vector<uint8_t>{0xFE, 0xFF});
  CHECK(Tensor::from_f64(DType::uint16, {1}, {65535}).bytes == std::vector<uint8_t>{0xFF, 0xFF});
  CHECK(Tensor::from_f64(DType::int32, {1}, {-2147483648.0}).bytes == std::vector<uint8_t>{0, 0, 0, 0x80});
  CHECK(Tensor::from_f64(DType::uint32, {1}, {0x01020304}).bytes == std::vector<uint8_t>{4, 3, 2, 1});
  CHECK(Tensor::from_f64(DType::int64, {1}, {-std::ldexp(1.0, 63)}).bytes ==
        std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0x80});
  // 2^64 - 2^11, the largest double below 2^64.
  CHECK(Tensor::from_f64(DType::uint64, {1}, {18446744073709549568.0}).bytes ==
        std::vector<uint8_t>{0x00, 0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  CHECK(Tensor::from_f64(DType::boolean, {2}, {1, 0}).bytes == std::vector<uint8_t>{1, 0});
}

TEST_CASE("from_f64 refuses integer values that are fractional, non-finite or out of range") {
  struct Case {
    DType t;
    double v;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {DType::int8, 128},   {DType::int8, -129},   {DType::uint8, -1},
      {DType::uint8, 256},  {DType::int16, 32768}, {DType::uint16, 65536},
      {DType::int32, 1.5},  {DType::int32, inf},   {DType::uint16, std::nan("")},
      {DType::int64, std::ldexp(1.0, 63)},         {DType::uint64, std::ldexp(1.0, 64)},
      {DType::uint32, 4294967296.0},               {DType::boolean, 2},
      {DType::boolean, 0.5},
  };
  for (const auto& c : cases) {
    INFO(bnorm::dtype_name(c.t) << " " << c.v);
    const auto e = error_of([&] { Tensor::from_f64(c.t, {2}, {0, c.v}, "x"); });
    CHECK(e.kind() == ErrorKind::input);
    CHECK_THAT(e.message(), Catch::Contains("tensor 'x'") && Catch::Contains("index 1") &&
                                Catch::Contains(bnorm::dtype_name(c.t)));
  }
}

TEST_CASE("from_f64 refuses a value count that does not match the shape") {
  const auto e = error_of([] { Tensor::from_f64(DType::float32, {2, 3}, {1, 2, 3, 4, 5}); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("5 values") && Catch::Contains("[2, 3]"));
}

TEST_CASE("to_f64 refuses a tensor whose type has no numeric value") {
  Tensor t;
  t.dtype = DType::string;
  t.name = "s";
  const auto e = error_of([&] { t.to_f64(); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK_THAT(e.message(), Catch::Contains("tensor 's'"));
}
