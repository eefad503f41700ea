// InstanceNormalization against the spec formula, evaluated in long double:
//   y = scale * (x - mean) / sqrt(variance + epsilon) + B,
//   mean and (population) variance per instance per channel,
// for every data type, over channel counts, spatial tails and batches, in
// place, with offset data and IEEE specials; bit for bit the same at every
// SIMD level and thread count.
#include "kernels/instance_norm.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::Type;

template <class T>
struct Kernel {
  static constexpr auto run =
      testing::by_type<T>(instance_norm_f32, instance_norm_f64, instance_norm_f16, instance_norm_bf16);
};

template <class T>
struct Case : testing::ScaledInputs<T> {
  using Base = testing::ScaledInputs<T>;
  using Base::shape, Base::x, Base::scale, Base::bias, Base::epsilon;

  Case(NcsShape s, testing::Random& rng, double lo = -3, double hi = 3) : Base(s, s.c, rng, lo, hi) {}

  void run(const T* in, T* out) const {
    Kernel<T>::run(in, out, shape, {scale.data(), bias.data(), epsilon});
  }

  size_t mismatches(bool in_place) const {
    std::vector<T> y = in_place ? x : testing::nan_filled<T>(x.size());
    run(in_place ? y.data() : x.data(), y.data());
    return testing::standardized_mismatches(
        x, y, shape.n * shape.c, shape.s, [&](size_t at) { return at / shape.s % shape.c; }, scale, bias, epsilon);
  }
};

TEST_CASE("InstanceNormalization matches the spec formula over channels, spatial tails and batches") {
  testing::sweep_every_type_against_reference<Case>();
}

TEST_CASE("InstanceNormalization on large tensors matches the spec formula") {
  testing::Random rng;
  for (const NcsShape& s : testing::level_sweep()) {
    INFO("N=" << s.n << " C=" << s.c << " S=" << s.s);
    CHECK(Case<float>(s, rng).mismatches(false) == 0);
    CHECK(Case<bf16>(s, rng).mismatches(true) == 0);
  }
}

TEST_CASE("InstanceNormalization keeps its precision on data far from zero") {
  testing::Random rng;
  CHECK(Case<float>({2, 3, 700}, rng, 999, 1001).mismatches(false) == 0);
  CHECK(Case<double>({2, 3, 700}, rng, 1e8 - 1, 1e8 + 1).mismatches(true) == 0);
}

// Float statistics are one shifted pass per chunk (moments.h). Around 1e6
// with a spread of 1, sum x^2 - (sum x)^2 / n unshifted would cancel about 42
// of float64's 53 bits; and a chunk whose first 32 elements (the shift) sit
// far from the rest is the worst case the shift allows.
TEST_CASE("InstanceNormalization float statistics keep their precision under cancellation") {
  testing::Random rng;
  CHECK(Case<float>({2, 3, 5000}, rng, 1e6 - 1, 1e6 + 1).mismatches(false) == 0);
  Case<float> c({1, 2, 5000}, rng, 1e6 - 1, 1e6 + 1);
  for (size_t i = 0; i < c.x.size(); ++i) {
    if ((i % 5000) % 2048 < 32) c.x[i] += 3000;
  }
  CHECK(c.mismatches(false) == 0);
}

template <class T>
void check_same_everywhere() {
  testing::Random rng;
  for (const NcsShape& s : testing::level_sweep()) {
    const Case<T> c(s, rng);
    testing::check_same_bits_everywhere(
        [&] {
          std::vector<T> y = testing::nan_filled<T>(c.x.size());
          c.run(c.x.data(), y.data());
          return testing::bits_of_all(y);
        },
        testing::describe<T>(s));
  }
}

TEST_CASE("InstanceNormalization gives the same bits at every SIMD level, thread count and store kind") {
  check_same_everywhere<float>();
  check_same_everywhere<double>();
  check_same_everywhere<f16>();
  check_same_everywhere<bf16>();
}

TEST_CASE("A constant instance normalizes to the bias, or to NaN when epsilon is 0") {
  testing::Random rng;
  Case<float> c({2, 2, 30}, rng);
  for (size_t s = 0; s < 30; ++s) c.x[30 + s] = -7.25f;  // n = 0, c = 1
  std::vector<float> y(c.x.size());
  c.run(c.x.data(), y.data());
  for (size_t s = 0; s < 30; ++s) CHECK(y[30 + s] == c.bias[1]);
  c.epsilon = 0;
  c.run(c.x.data(), y.data());
  for (size_t s = 0; s < 30; ++s) CHECK(std::isnan(y[30 + s]));
  CHECK(std::isfinite(y[0]));
}

TEST_CASE("An infinity or a NaN poisons its own instance only") {
  testing::Random rng;
  Case<double> c({2, 2, 30}, rng);
  c.x[31] = -std::numeric_limits<double>::infinity();  // n = 0, c = 1
  c.x[95] = std::numeric_limits<double>::quiet_NaN();   // n = 1, c = 1
  std::vector<double> y(c.x.size());
  c.run(c.x.data(), y.data());
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t row = i / 30;
    CHECK(std::isnan(y[i]) == (row == 1 || row == 3));
    CHECK(std::isfinite(y[i]) == (row == 0 || row == 2));
  }
}

}  // namespace
}  // namespace bnorm::kernels
