#include "eval/report/rounding.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace bnorm;

namespace {

// Deterministic noise in [-1, 1).
std::vector<double> noise(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + 5;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = (s >> 8) / 8388608.0 - 1.0;
  }
  return v;
}

// [2, 4, 8, 8]: A64 values of magnitude about 1, A = A64 + e_A, B = A64 + e_B.
struct Case {
  std::vector<int64_t> dims{2, 4, 8, 8};
  std::vector<double> exact, a, b;
  Case() {
    exact = noise(512, 1);
    const auto na = noise(512, 2), nb = noise(512, 3);
    for (size_t i = 0; i < exact.size(); ++i) {
      a.push_back(exact[i] + 1e-6 * na[i]);
      b.push_back(exact[i] + 1e-6 * nb[i]);
    }
  }
  RoundingDiff judge() const {
    return judge_rounding(Tensor::from_f64(DType::float64, dims, a), Tensor::from_f64(DType::float64, dims, exact),
                          Tensor::from_f64(DType::float64, dims, b));
  }
};

}  // namespace

TEST_CASE("B with errors like A's own is within A's rounding, ten times larger is not") {
  Case c;
  RoundingDiff d = c.judge();
  CHECK(d.pass);
  CHECK(d.worst < 1);
  CHECK(d.a.max <= 1e-6);
  CHECK(d.b.max <= 1e-6);
  for (size_t i = 0; i < c.b.size(); ++i) c.b[i] = c.exact[i] + 10 * (c.a[i] - c.exact[i]);
  d = c.judge();
  CHECK_FALSE(d.pass);
  CHECK(d.worst > 2);
  CHECK(d.outside > 0);
}

TEST_CASE("one channel shifted by less than the element errors fails at the channel mean") {
  Case c;
  // Channel 2 of both batch items moved by 0.8e-6: each element stays within
  // 1.8e-6 (under 4x A's largest error), but the channel's mean moves 0.8e-6
  // where A's means average out to about 1e-6 / sqrt(128).
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 64; ++k) c.b[static_cast<size_t>(n * 256 + 2 * 64 + k)] += 0.8e-6;
  const RoundingDiff d = c.judge();
  CHECK_FALSE(d.pass);
  CHECK(d.worst_at == "channel mean");
  CHECK(d.channel_b > 0.7e-6);
  CHECK(d.channel_a < 0.2e-6);
  CHECK(d.b.max < 4 * d.a.max + d.floor);  // no element alone is outside
}

TEST_CASE("the floor stands for values A computes exactly") {
  const std::vector<int64_t> dims{4};
  const Tensor exact = Tensor::from_f64(DType::float32, dims, {1, 2, 0, -4});
  const Tensor ref = Tensor::from_f64(DType::float64, dims, {1, 2, 0, -4});
  // B off by one float32 ulp of the largest value: within 64 units of roundoff of max |A64|.
  const Tensor b = Tensor::from_f64(DType::float32, dims, {1, 2, std::ldexp(1.0, -21), -4});
  RoundingDiff d = judge_rounding(exact, ref, b);
  CHECK(d.pass);
  CHECK(d.floor == Approx(64 * std::ldexp(1.0, -24) * 4));
  const Tensor far = Tensor::from_f64(DType::float32, dims, {1, 2, 1e-3, -4});
  d = judge_rounding(exact, ref, far);
  CHECK_FALSE(d.pass);
}

TEST_CASE("integer values pass where B equals A or A64, and NaN must be A's or A64's") {
  const std::vector<int64_t> dims{4};
  const Tensor a = Tensor::from_f64(DType::int64, dims, {0, 1, 2, 3});
  const Tensor exact = Tensor::from_f64(DType::int64, dims, {0, 1, 3, 3});  // A's rounding flipped element 2
  CHECK(judge_rounding(a, exact, Tensor::from_f64(DType::int64, dims, {0, 1, 3, 3})).pass);
  const RoundingDiff d = judge_rounding(a, exact, Tensor::from_f64(DType::int64, dims, {0, 2, 2, 3}));
  CHECK_FALSE(d.pass);
  CHECK(d.outside == 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor fa = Tensor::from_f64(DType::float32, dims, {nan, 1, 2, 3});
  const Tensor fr = Tensor::from_f64(DType::float64, dims, {nan, 1, 2, 3});
  CHECK(judge_rounding(fa, fr, Tensor::from_f64(DType::float32, dims, {nan, 1, 2, 3})).pass);
  CHECK_FALSE(judge_rounding(fa, fr, Tensor::from_f64(DType::float32, dims, {0, 1, 2, 3})).pass);
  CHECK_FALSE(judge_rounding(fr, fr, Tensor::from_f64(DType::float64, dims, {nan, nan, 2, 3})).pass);
}

TEST_CASE("the magnitude criterion judges a statistic of |B - A| against max |A|") {
  const std::vector<int64_t> dims{4};
  const Tensor a = Tensor::from_f64(DType::float32, dims, {10, -20, 5, 0});
  const Tensor b = Tensor::from_f64(DType::float32, dims, {10.001, -20, 5, 0.03});
  ScaledDiff d = judge_scaled(a, b, "max", 1e-3);
  CHECK(d.scale == 20);
  CHECK(d.allowed == Approx(0.02));
  CHECK_FALSE(d.pass);  // 0.03 > 0.02
  d = judge_scaled(a, b, "median", 1e-3);
  CHECK(d.pass);
  CHECK_THROWS(stat_of(d.error, "p50"));
}
