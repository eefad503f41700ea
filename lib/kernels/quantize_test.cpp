// quantize.h at every SIMD level against the formulas written with
// std::nearbyint (ties to even in the default rounding mode) and double
// arithmetic: ties, values past the 8-bit range, infinities, NaN, both
// output types, lengths that leave a tail at every level.
#include "kernels/quantize.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

int32_t expected(double q, int32_t zp, bool is_signed) {
  const double r = std::isnan(q) ? 0.0 : std::nearbyint(q);
  const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  return static_cast<int32_t>(std::min(std::max(r + zp, lo), hi));
}

int32_t element(const std::vector<uint8_t>& y, size_t i, bool is_signed) {
  return is_signed ? static_cast<int8_t>(y[i]) : y[i];
}

std::vector<float> inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 127.5f, 128.5f, -128.5f, 254.5f, 255.5f,
                       1e30f, -1e30f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 3e6f, -5e9f, 0x1p22f + 1};
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-400.0f, 400.0f);
  for (int i = 0; i < 2000; ++i) x.push_back(u(rng));
  for (int i = -600; i <= 600; ++i) x.push_back(static_cast<float>(i) / 2);  // every tie in range
  return x;
}

void check_quantize(const std::vector<float>& x, bool is_signed, int32_t zp) {
  for (float scale : {1.0f, 0.37f, 3.0f}) {
    std::vector<uint8_t> y(x.size());
    quantize_f32(x.data(), x.size(), scale, zp, y.data(), is_signed);
    for (size_t i = 0; i < x.size(); ++i) {
      INFO("x " << x[i] << " scale " << scale << " zp " << zp << " signed " << is_signed);
      REQUIRE(element(y, i, is_signed) == expected(static_cast<double>(x[i] / scale), zp, is_signed));
    }
  }
}

void check_requantize(const std::vector<float>& x, bool is_signed, int32_t zp) {
  std::vector<int32_t> acc;
  for (float v : x) acc.push_back(std::isfinite(v) ? static_cast<int32_t>(std::fmax(std::fmin(v * 1000, 2e9f), -2e9f)) : 7);
  for (double mult : {1.0, 0.001, 0.0005, std::numeric_limits<double>::quiet_NaN()}) {
    std::vector<uint8_t> y(acc.size());
    requantize(acc.data(), acc.size(), -1000, mult, zp, y.data(), is_signed);
    for (size_t i = 0; i < acc.size(); ++i) {
      INFO("acc " << acc[i] << " mult " << mult << " zp " << zp << " signed " << is_signed);
      REQUIRE(element(y, i, is_signed) == expected((static_cast<double>(acc[i]) - 1000) * mult, zp, is_signed));
    }
  }
}

TEST_CASE("quantize_f32 and requantize round half to even and saturate as nearbyint in double", "[kernels][quant]") {
  testing::SettingsGuard guard;
  const std::vector<float> x = inputs();
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    INFO("level " << isa_name(isa));
    for (bool is_signed : {false, true})
      for (int32_t zp : {0, 3, is_signed ? -128 : 255}) {
        check_quantize(x, is_signed, zp);
        check_requantize(x, is_signed, zp);
      }
  }
}

TEST_CASE("dequantize_f32 is one float multiply of the exact difference and range_f32 skips NaN", "[kernels][quant]") {
  testing::SettingsGuard guard;
  std::vector<uint8_t> x(256);
  for (int i = 0; i < 256; ++i) x[i] = static_cast<uint8_t>(i);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> many(37, 0.5f);
  many[33] = -7.0f;
  many[20] = 9.0f;
  many[5] = nan;
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    INFO("level " << isa_name(isa));
    for (bool is_signed : {false, true}) {
      std::vector<float> y(256);
      dequantize_f32(x.data(), x.size(), is_signed, 17, 0.1f, y.data());
      for (int i = 0; i < 256; ++i) {
        const int v = is_signed ? static_cast<int8_t>(x[i]) : x[i];
        REQUIRE(y[i] == static_cast<float>(v - 17) * 0.1f);
      }
    }
    const std::vector<float> v{3.0f, nan, -2.0f, 1.0f};
    float lo = 1, hi = 1;
    range_f32(v.data(), v.size(), lo, hi);
    REQUIRE((lo == -2.0f && hi == 3.0f));
    range_f32(v.data() + 3, 1, lo, hi);
    REQUIRE((lo == 0.0f && hi == 1.0f));
    range_f32(many.data(), many.size(), lo, hi);
    REQUIRE((lo == -7.0f && hi == 9.0f));
  }
}

}  // namespace
}  // namespace bnorm::kernels
