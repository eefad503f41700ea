// float8e8m0 conversions. The expected codes are worked out by hand from
// the bit layouts: code = 127 + the exponent of the chosen power of two.
// Sources are written as their bit patterns (float, float16, bfloat16,
// double), so subnormal inputs are exactly the ones named.
#include "kernels/e8m0.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/half.h"

namespace {

using bnorm::kernels::E8m0Round;
using bnorm::kernels::e8m0_to_f64;
using bnorm::kernels::to_e8m0;

float f32_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

double f64_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

float f16_bits(uint16_t b) { return bnorm::kernels::f16_to_f32(bnorm::kernels::f16{b}); }
float bf16_bits(uint16_t b) { return bnorm::kernels::bf16_to_f32(bnorm::kernels::bf16{b}); }

// One in-range source value and its code in each rounding mode.
struct Case {
  const char* what;
  long double x;
  int up, down, nearest;
};

void check_modes(const Case& c) {
  INFO(c.what);
  for (bool saturate : {true, false}) {
    CHECK(int{to_e8m0(c.x, E8m0Round::up, saturate)} == c.up);
    CHECK(int{to_e8m0(c.x, E8m0Round::down, saturate)} == c.down);
    CHECK(int{to_e8m0(c.x, E8m0Round::nearest, saturate)} == c.nearest);
  }
}

// A value outside [2^-127, 2^127] (or infinite): `sat` with saturate, NaN
// (0xFF) without, in every mode.
void check_out_of_range(const char* what, long double x, int sat) {
  INFO(what);
  for (E8m0Round m : {E8m0Round::up, E8m0Round::down, E8m0Round::nearest}) {
    CHECK(int{to_e8m0(x, m, true)} == sat);
    CHECK(int{to_e8m0(x, m, false)} == 0xFF);
  }
}

}  // namespace

TEST_CASE("Every float8e8m0 code decodes to 2^(code - 127), and 0xFF to NaN", "[kernels][e8m0]") {
  CHECK(e8m0_to_f64(0x00) == std::ldexp(1.0, -127));
  CHECK(e8m0_to_f64(0x7F) == 1.0);
  CHECK(e8m0_to_f64(0x80) == 2.0);
  CHECK(e8m0_to_f64(0xFE) == std::ldexp(1.0, 127));
  CHECK(std::isnan(e8m0_to_f64(0xFF)));
  for (int c = 0; c < 255; ++c) {
    const double v = e8m0_to_f64(static_cast<uint8_t>(c));
    CHECK(v == std::ldexp(1.0, c - 127));
    for (E8m0Round m : {E8m0Round::up, E8m0Round::down, E8m0Round::nearest}) {
      CHECK(int{to_e8m0(v, m, false)} == c);  // powers of two are kept in every mode
    }
  }
}

TEST_CASE("float sources round up, down or to nearest with ties up, subnormals included", "[kernels][e8m0]") {
  const Case cases[] = {
      {"1.0f (0x3F800000)", f32_bits(0x3F800000), 127, 127, 127},
      {"1 + 2^-23 (0x3F800001)", f32_bits(0x3F800001), 128, 127, 127},
      {"just below 1.5 (0x3FBFFFFF)", f32_bits(0x3FBFFFFF), 128, 127, 127},
      {"1.5, the tie (0x3FC00000)", f32_bits(0x3FC00000), 128, 127, 128},
      {"just below 2 (0x3FFFFFFF)", f32_bits(0x3FFFFFFF), 128, 127, 128},
      {"0.124f (0x3DFDF3B6), in [2^-4, 2^-3)", f32_bits(0x3DFDF3B6), 124, 123, 124},
      {"-1.5f: the sign is dropped", f32_bits(0xBFC00000), 128, 127, 128},
      {"2^127 (0x7F000000), E8M0_MAX", f32_bits(0x7F000000), 254, 254, 254},
      {"just below 2^127 (0x7EFFFFFF)", f32_bits(0x7EFFFFFF), 254, 253, 254},
      {"subnormal 2^-127 (0x00400000), E8M0_MIN", f32_bits(0x00400000), 0, 0, 0},
      {"subnormal 2^-127 + 2^-149 (0x00400001)", f32_bits(0x00400001), 1, 0, 0},
      {"subnormal 1.5 * 2^-127, a tie (0x00600000)", f32_bits(0x00600000), 1, 0, 1},
      {"subnormal just below 2^-126 (0x007FFFFF)", f32_bits(0x007FFFFF), 1, 0, 1},
      {"smallest normal 2^-126 (0x00800000)", f32_bits(0x00800000), 1, 1, 1},
  };
  for (const auto& c : cases) check_modes(c);
  check_out_of_range("subnormal just below 2^-127 (0x003FFFFF)", f32_bits(0x003FFFFF), 0x00);
  check_out_of_range("smallest subnormal 2^-149 (0x00000001)", f32_bits(0x00000001), 0x00);
  check_out_of_range("+0", 0.0f, 0x00);
  check_out_of_range("-0", -0.0f, 0x00);
  check_out_of_range("2^127 + 2^104 (0x7F000001)", f32_bits(0x7F000001), 0xFE);
  check_out_of_range("FLT_MAX (0x7F7FFFFF)", f32_bits(0x7F7FFFFF), 0xFE);
  check_out_of_range("+Inf", f32_bits(0x7F800000), 0xFE);
  check_out_of_range("-Inf", f32_bits(0xFF800000), 0xFE);
  for (bool saturate : {true, false}) {
    CHECK(int{to_e8m0(f32_bits(0x7FC00000), E8m0Round::up, saturate)} == 0xFF);
    CHECK(int{to_e8m0(f32_bits(0xFFC00000), E8m0Round::nearest, saturate)} == 0xFF);
  }
}

TEST_CASE("float16 sources, subnormals included", "[kernels][e8m0]") {
  const Case cases[] = {
      {"1.5 (0x3E00)", f16_bits(0x3E00), 128, 127, 128},
      {"1.25 (0x3D00)", f16_bits(0x3D00), 128, 127, 127},
      {"65504 = 2^15 * (2 - 2^-10) (0x7BFF)", f16_bits(0x7BFF), 143, 142, 143},
      {"smallest subnormal 2^-24 (0x0001)", f16_bits(0x0001), 103, 103, 103},
      {"subnormal 3 * 2^-24 = 1.5 * 2^-23, a tie (0x0003)", f16_bits(0x0003), 105, 104, 105},
      {"subnormal 5 * 2^-24 = 1.25 * 2^-22 (0x0005)", f16_bits(0x0005), 106, 105, 105},
      {"subnormal 2^-15 (0x0200)", f16_bits(0x0200), 112, 112, 112},
      {"subnormal 1.5 * 2^-15 (0x0300)", f16_bits(0x0300), 113, 112, 113},
      {"subnormal just below 2^-14 (0x03FF)", f16_bits(0x03FF), 113, 112, 113},
  };
  for (const auto& c : cases) check_modes(c);
  check_out_of_range("float16 +Inf (0x7C00)", f16_bits(0x7C00), 0xFE);
  check_out_of_range("float16 0 (0x0000)", f16_bits(0x0000), 0x00);
  CHECK(int{to_e8m0(f16_bits(0x7E00), E8m0Round::up, true)} == 0xFF);  // NaN
}

TEST_CASE("bfloat16 sources, subnormals below and around E8M0_MIN included", "[kernels][e8m0]") {
  const Case cases[] = {
      {"1.0 (0x3F80)", bf16_bits(0x3F80), 127, 127, 127},
      {"1.5 (0x3FC0)", bf16_bits(0x3FC0), 128, 127, 128},
      {"subnormal 64 * 2^-133 = 2^-127 (0x0040)", bf16_bits(0x0040), 0, 0, 0},
      {"subnormal 65 * 2^-133 (0x0041)", bf16_bits(0x0041), 1, 0, 0},
      {"subnormal 96 * 2^-133 = 1.5 * 2^-127, a tie (0x0060)", bf16_bits(0x0060), 1, 0, 1},
      {"subnormal 127 * 2^-133 (0x007F)", bf16_bits(0x007F), 1, 0, 1},
      {"2^127 (0x7F00)", bf16_bits(0x7F00), 254, 254, 254},
  };
  for (const auto& c : cases) check_modes(c);
  check_out_of_range("subnormal 2^-133 (0x0001)", bf16_bits(0x0001), 0x00);
  check_out_of_range("subnormal 63 * 2^-133 (0x003F)", bf16_bits(0x003F), 0x00);
  check_out_of_range("largest bfloat16 (0x7F7F)", bf16_bits(0x7F7F), 0xFE);
  check_out_of_range("2^127 * (1 + 2^-7) (0x7F01)", bf16_bits(0x7F01), 0xFE);
}

TEST_CASE("double sources, and 64-bit integers without a rounding through double", "[kernels][e8m0]") {
  const Case cases[] = {
      {"0.375 = 1.5 * 2^-2, a tie", 0.375, 126, 125, 126},
      {"just below 1.5 (0x3FF7FFFFFFFFFFFF)", f64_bits(0x3FF7FFFFFFFFFFFFull), 128, 127, 127},
      {"2^-127 exactly (a normal double)", f64_bits(0x3800000000000000ull), 0, 0, 0},
      {"2^-127 * (1 + 2^-52)", f64_bits(0x3800000000000001ull), 1, 0, 0},
      {"2^127 * (1 - 2^-53)", f64_bits(0x47DFFFFFFFFFFFFFull), 254, 253, 254},
      {"2^62 - 1 as an integer", static_cast<long double>(INT64_C(0x3FFFFFFFFFFFFFFF)), 189, 188, 189},
      {"3 * 2^61 as an integer, a tie", static_cast<long double>(INT64_C(0x6000000000000000)), 190, 189, 190},
  };
  for (const auto& c : cases) check_modes(c);
  check_out_of_range("2^-127 * (1 - 2^-53)", f64_bits(0x37FFFFFFFFFFFFFFull), 0x00);
  check_out_of_range("smallest subnormal double", f64_bits(1), 0x00);
  check_out_of_range("2^127 * (1 + 2^-52)", f64_bits(0x47E0000000000001ull), 0xFE);
  check_out_of_range("DBL_MAX", f64_bits(0x7FEFFFFFFFFFFFFFull), 0xFE);
  check_out_of_range("-DBL_MAX: the magnitude", -f64_bits(0x7FEFFFFFFFFFFFFFull), 0xFE);
}
