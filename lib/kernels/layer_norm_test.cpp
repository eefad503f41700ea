// LayerNormalization and RMSNormalization rows (layer_norm.h) against the
// spec formulas evaluated in long double, for every storage type (and
// every pair of them for RMS), over row lengths around the vector widths
// and the moments chunk, row counts, per-row parameters, no bias, in place;
// each output rounded once; the same bits at every SIMD level and thread
// count; IEEE specials.
#include "kernels/layer_norm.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/norm_common.h"
#include "support/norm_kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::Type;
using LD = long double;

const std::vector<size_t> kLens = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 100, 768, 2049, 5000};

template <class X>
struct Rows {
  size_t rows, len;
  std::vector<X> x;
  std::vector<double> scale, bias;
  bool per_row = false;
  bool with_bias = true;
  double epsilon = 1e-5;

  Rows(size_t r, size_t n, testing::Random& rng, bool per_row_params = false, double lo = -3, double hi = 3)
      : rows(r), len(n), per_row(per_row_params) {
    x = testing::random_values<X>(rng, r * n, lo, hi);
    const size_t params = per_row ? r * n : n;
    scale = testing::random_values<double>(rng, params, -2, 2);
    bias = testing::random_values<double>(rng, params, -1, 1);
  }

  RowNormParams params(bool rms) const {
    return {scale.data(), per_row ? len : 0, with_bias && !rms ? bias.data() : nullptr, per_row ? len : 0,
            epsilon, rms};
  }

  // Mismatches of y (and of the statistics) against the long double formula.
  template <class Y>
  size_t mismatches(const std::vector<Y>& y, bool rms, const std::vector<double>* mean = nullptr,
                    const std::vector<double>* inv = nullptr) const {
    size_t bad = 0;
    for (size_t r = 0; r < rows; ++r) {
      LD mu = 0, var = 0;
      for (size_t i = 0; i < len; ++i) mu += Type<X>::decode(x[r * len + i]);
      mu /= len;
      for (size_t i = 0; i < len; ++i) {
        const LD v = Type<X>::decode(x[r * len + i]);
        var += rms ? v * v : (v - mu) * (v - mu);
      }
      var /= len;
      if (rms) mu = 0;
      const LD is = 1 / std::sqrt(var + LD(epsilon));
      if (mean != nullptr && !testing::close_to((*mean)[r], double(mu), 0)) ++bad;
      if (inv != nullptr && !testing::close_to((*inv)[r], double(is), 0)) ++bad;
      for (size_t i = 0; i < len; ++i) {
        const size_t at = r * len + i;
        const size_t pi = per_row ? at : i;
        const LD v = Type<X>::decode(x[at]);
        const LD b = with_bias && !rms ? LD(bias[pi]) : 0;
        const LD ref = (v - mu) * is * LD(scale[pi]) + b;
        const double magnitude = double(std::fabs((std::fabs(v) + std::fabs(mu)) * is * LD(scale[pi])) + std::fabs(b));
        if (!testing::rounded_once(y[at], ref, magnitude)) {
          if (bad++ == 0) UNSCOPED_INFO("row " << r << " element " << i << ": got " << Type<Y>::decode(y[at]) << ", want " << double(ref));
        }
      }
    }
    return bad;
  }

  template <class Y>
  std::vector<Y> run(bool rms, std::vector<double>* mean = nullptr, std::vector<double>* inv = nullptr) const {
    std::vector<Y> y = testing::nan_filled<Y>(x.size());
    norm_rows(x.data(), y.data(), rows, len, params(rms), mean ? mean->data() : nullptr, inv ? inv->data() : nullptr);
    return y;
  }
};

template <class T>
void layer_norm_sweep() {
  testing::Random rng;
  for (size_t len : kLens) {
    for (size_t rows : {1, 2, 5}) {
      for (bool per_row : {false, true}) {
        Rows<T> c(rows, len, rng, per_row);
        c.with_bias = !per_row || rows != 2;
        INFO(Type<T>::name << " rows=" << rows << " len=" << len << " per_row=" << per_row << " bias=" << c.with_bias);
        std::vector<double> mean(rows), inv(rows);
        const std::vector<T> y = c.template run<T>(false, &mean, &inv);
        CHECK(c.mismatches(y, false, &mean, &inv) == 0);
        std::vector<T> in_place = c.x;
        norm_rows(in_place.data(), in_place.data(), rows, len, c.params(false), nullptr, nullptr);
        CHECK(c.mismatches(in_place, false) == 0);
      }
    }
  }
}

TEST_CASE("LayerNormalization rows match the spec formula, rounded once, for every type", "[kernels][normfamily]") {
  layer_norm_sweep<float>();
  layer_norm_sweep<double>();
  layer_norm_sweep<f16>();
  layer_norm_sweep<bf16>();
}

template <class X, class Y>
void rms_sweep() {
  testing::Random rng;
  for (size_t len : kLens) {
    for (size_t rows : {1, 3}) {
      Rows<X> c(rows, len, rng, rows == 3);
      INFO(Type<X>::name << " -> " << Type<Y>::name << " rows=" << rows << " len=" << len);
      std::vector<double> mean(rows), inv(rows);
      const std::vector<Y> y = c.template run<Y>(true, &mean, &inv);
      CHECK(c.mismatches(y, true, &mean, &inv) == 0);
    }
  }
}

template <class X>
void rms_sweep_from() {
  rms_sweep<X, float>();
  rms_sweep<X, double>();
  rms_sweep<X, f16>();
  rms_sweep<X, bf16>();
}

TEST_CASE("RMSNormalization rows match the spec formula for every pair of input and output types", "[kernels][normfamily]") {
  rms_sweep_from<float>();
  rms_sweep_from<double>();
  rms_sweep_from<f16>();
  rms_sweep_from<bf16>();
}

TEST_CASE("LayerNormalization keeps its precision on rows far from zero", "[kernels][normfamily]") {
  testing::Random rng;
  const Rows<float> f(3, 5000, rng, false, 1e6 - 1, 1e6 + 1);
  CHECK(f.mismatches(f.run<float>(false), false) == 0);
  const Rows<double> d(2, 700, rng, false, 1e8 - 1, 1e8 + 1);
  CHECK(d.mismatches(d.run<double>(false), false) == 0);
}

// Specials in rows 1 and 2 of 16-bit data: a signalling NaN with a payload
// and an infinity (row 1), values whose results are f16 subnormals or
// overflow (row 2, with a huge scale).
template <class X>
void add_specials(Rows<X>& c) {
  if (c.rows < 3 || c.len < 8) return;
  if constexpr (std::is_same_v<X, f16> || std::is_same_v<X, bf16>) {
    c.x[c.len + 3].bits = std::is_same_v<X, f16> ? 0xFD17 : 0xFF91;
    c.x[c.len + 5].bits = std::is_same_v<X, f16> ? 0x7C00 : 0x7F80;
  }
  if (c.per_row) {
    for (size_t i = 0; i < c.len; ++i) c.scale[2 * c.len + i] = (i % 3 == 0) ? 3e4 : (i % 3 == 1 ? 1e-7 : -2e-5);
  }
}

template <class X, class Y>
void check_same_everywhere(bool rms) {
  testing::Random rng;
  for (size_t len : {size_t{7}, size_t{768}, size_t{5000}, size_t{29}}) {
    Rows<X> c(len == 768 ? 64 : 9, len, rng, len == 29);
    add_specials(c);
    testing::check_same_bits_everywhere([&] { return testing::bits_of_all(c.template run<Y>(rms)); },
                                        std::string(Type<X>::name) + " len " + std::to_string(len));
  }
}

TEST_CASE("Normalized rows are the same bits at every SIMD level and thread count", "[kernels][normfamily]") {
  check_same_everywhere<float, float>(false);
  check_same_everywhere<double, double>(false);
  check_same_everywhere<f16, f16>(false);
  check_same_everywhere<bf16, bf16>(false);
  check_same_everywhere<float, float>(true);
  check_same_everywhere<f16, float>(true);
  check_same_everywhere<f16, f16>(true);
  check_same_everywhere<bf16, bf16>(true);
  check_same_everywhere<float, bf16>(true);
  check_same_everywhere<double, f16>(true);
  check_same_everywhere<bf16, double>(true);
  check_same_everywhere<f16, bf16>(true);
  check_same_everywhere<bf16, f16>(true);
  check_same_everywhere<f16, double>(true);
}

TEST_CASE("A constant row normalizes to the bias, or to NaN when epsilon is 0", "[kernels][normfamily]") {
  testing::Random rng;
  Rows<float> c(2, 40, rng);
  for (size_t i = 0; i < 40; ++i) c.x[40 + i] = -7.25f;
  std::vector<double> mean(2), inv(2);
  std::vector<float> y = c.run<float>(false, &mean, &inv);
  for (size_t i = 0; i < 40; ++i) CHECK(y[40 + i] == static_cast<float>(c.bias[i]));
  CHECK(mean[1] == -7.25);
  CHECK(inv[1] == 1 / std::sqrt(1e-5));
  c.epsilon = 0;
  y = c.run<float>(false);
  for (size_t i = 0; i < 40; ++i) CHECK(std::isnan(y[40 + i]));
  CHECK(std::isfinite(y[0]));
}

TEST_CASE("A NaN or an infinity poisons its own row only", "[kernels][normfamily]") {
  testing::Random rng;
  Rows<double> c(3, 20, rng);
  c.x[25] = std::numeric_limits<double>::infinity();
  c.x[47] = std::numeric_limits<double>::quiet_NaN();
  for (bool rms : {false, true}) {
    const std::vector<double> y = c.run<double>(rms);
    for (size_t i = 0; i < 20; ++i) CHECK(std::isfinite(y[i]));
    for (size_t i = 20; i < 40; ++i) {  // RMS: x * 0, NaN only for the infinity itself
      if (rms && i != 25) CHECK(y[i] == 0);
      else CHECK(std::isnan(y[i]));
    }
    for (size_t i = 40; i < 60; ++i) CHECK(std::isnan(y[i]));
  }
}

TEST_CASE("Rows of length 0 write nothing and report NaN statistics", "[kernels][normfamily]") {
  std::vector<float> x, y;
  std::vector<double> mean(3, 1.0), inv(3, 1.0);
  const RowNormParams p{nullptr, 0, nullptr, 0, 1e-5, false};
  norm_rows(x.data(), y.data(), 3, 0, p, mean.data(), inv.data());
  for (double m : mean) CHECK(std::isnan(m));
}

// Outputs around and below float's smallest normal, where the Avx512 loops
// test exactness with integers and where VCVTNEPS2BF16 would flush: each
// output is the float64 formula, from the reported statistics, rounded by
// half.h, at every level and with AVX512-BF16 on and off.
template <class Y>
void check_tiny_outputs(Y (*round)(double)) {
  testing::Random rng;
  testing::SettingsGuard guard;
  for (size_t len : {size_t{100}, size_t{3000}}) {
    Rows<float> c(3, len, rng, true);
    for (size_t i = 0; i < c.scale.size(); ++i) {
      c.scale[i] = std::ldexp(rng.uniform(1, 2), static_cast<int>(rng.uniform(-155, -118))) * (i % 2 ? -1 : 1);
      c.bias[i] = i % 3 ? 0.0 : std::ldexp(rng.uniform(-2, 2), static_cast<int>(rng.uniform(-150, -124)));
    }
    for (Isa isa : testing::available_isas()) {
      for (bool bf16_insn : {false, true}) {
        set_active_isa(isa);
        set_avx512_bf16(bf16_insn);
        std::vector<double> mean(3), inv(3);
        const std::vector<Y> y = c.run<Y>(false, &mean, &inv);
        size_t bad = 0;
        for (size_t r = 0; r < 3; ++r) {
          for (size_t i = 0; i < len; ++i) {
            const size_t at = r * len + i;
            const double want = (static_cast<double>(c.x[at]) - mean[r]) * inv[r] * c.scale[at] + c.bias[at];
            bad += Type<Y>::bits(y[at]) != Type<Y>::bits(round(want));
          }
        }
        INFO(Type<Y>::name << " at " << isa_name(isa) << ", AVX512-BF16 " << bf16_insn << ", len " << len);
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("Outputs below float's normal range round once at every level", "[kernels][normfamily]") {
  check_tiny_outputs<bf16>(f64_to_bf16);
  check_tiny_outputs<f16>(f64_to_f16);
}

// The kernels' f16/bf16 rounding (via float rounded to odd) against
// half.h's direct rounding from double, on random doubles and on the
// hard cases: ties of the target, a float ulp either side of a tie,
// overflow, subnormals, signed zeros, infinities.
TEST_CASE("Rounding double to float16 and bfloat16 through odd floats rounds once", "[kernels][normfamily]") {
  std::vector<double> values = {0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e300, -1e300, 0x1p-24, 0x1p-25,
                                0x1.8p-25, 0x1p-26, 0x1p-149, 0x1p-150, 1e-320, 3.4e38, 3.5e38,
                                std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  testing::Random rng;
  for (int i = 0; i < 20000; ++i) {
    const double m = rng.uniform(1, 2);
    const int e = static_cast<int>(rng.uniform(-140, 130));
    values.push_back(std::ldexp(i % 2 ? m : -m, e));
    // A tie of f16 (bit 12 of a float mantissa) or of bf16 (bit 15), exactly and a hair off.
    const double base = std::ldexp(std::floor(std::ldexp(m, 10)) + 0.5, e - 10);
    const double bbase = std::ldexp(std::floor(std::ldexp(m, 7)) + 0.5, e - 7);
    for (double b : {base, bbase}) {
      values.push_back(b);
      values.push_back(std::nextafter(b, 0.0));
      values.push_back(std::nextafter(b, 1e308));
      values.push_back(b * (1 + 0x1p-30));
      values.push_back(b * (1 - 0x1p-30));
    }
  }
  size_t bad = 0;
  for (double v : values) {
    bad += detail::encode<f16>(v).bits != f64_to_f16(v).bits;
    bad += detail::encode<bf16>(v).bits != f64_to_bf16(v).bits;
  }
  CHECK(bad == 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(detail::encode<f16>(-nan).bits == f64_to_f16(-nan).bits);
  CHECK(detail::encode<bf16>(nan).bits == f64_to_bf16(nan).bits);
}

}  // namespace
}  // namespace bnorm::kernels
