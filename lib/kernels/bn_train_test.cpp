// Training-mode BatchNormalization against the spec formulas, evaluated in
// long double here:
//   mean = ReduceMean(X over N, S),  var = ReduceVar(X over N, S) (population)
//   Y = (X - mean) / sqrt(var + epsilon) * scale + B
// for every data type, over channel counts, spatial tails and batches, in
// place, with offset data and IEEE specials; statistics bit for bit the
// same at every SIMD level and thread count.
#include "kernels/bn_train.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::Type;
using LD = long double;

template <class T>
struct Kernels {
  static constexpr auto train = testing::by_type<T>(bn_train_f32, bn_train_f64, bn_train_f16, bn_train_bf16);
  static constexpr auto stats =
      testing::by_type<T>(bn_batch_stats_f32, bn_batch_stats_f64, bn_batch_stats_f16, bn_batch_stats_bf16);
};

template <class T>
struct Case : testing::ScaledInputs<T> {
  using Base = testing::ScaledInputs<T>;
  using Base::shape, Base::x, Base::scale, Base::bias, Base::epsilon;

  Case(NcsShape s, testing::Random& rng, double lo = -3, double hi = 3) : Base(s, s.c, rng, lo, hi) {}

  size_t channel(size_t i) const { return (i / shape.s) % shape.c; }

  // Two-pass statistics of channel c in long double.
  void reference_stats(size_t c, LD& mean, LD& var) const {
    LD sum = 0;
    for (size_t n = 0; n < shape.n; ++n) {
      for (size_t s = 0; s < shape.s; ++s) sum += Type<T>::decode(x[(n * shape.c + c) * shape.s + s]);
    }
    const LD count = LD(shape.n * shape.s);
    mean = sum / count;
    LD squares = 0;
    for (size_t n = 0; n < shape.n; ++n) {
      for (size_t s = 0; s < shape.s; ++s) {
        const LD d = Type<T>::decode(x[(n * shape.c + c) * shape.s + s]) - mean;
        squares += d * d;
      }
    }
    var = squares / count;
  }

  // Runs bn_train into a NaN-filled buffer (or in place); counts statistics
  // (off by more than stat_tol, relative) and outputs off the reference.
  size_t mismatches(bool in_place, double stat_tol = 1e-12) const {
    std::vector<T> y = in_place ? x : testing::nan_filled<T>(x.size());
    std::vector<double> mean(shape.c, std::nan("")), var(shape.c, std::nan(""));
    Kernels<T>::train(in_place ? y.data() : x.data(), y.data(), shape,
                      {scale.data(), bias.data(), epsilon}, mean.data(), var.data());
    size_t bad = 0;
    std::vector<LD> ref_mean(shape.c), ref_var(shape.c);
    for (size_t c = 0; c < shape.c; ++c) {
      reference_stats(c, ref_mean[c], ref_var[c]);
      const double spread = std::fabs(double(ref_mean[c])) + std::sqrt(double(ref_var[c]));
      if (!(std::fabs(mean[c] - double(ref_mean[c])) <= stat_tol * spread) ||
          !(std::fabs(var[c] - double(ref_var[c])) <= stat_tol * double(ref_var[c]))) {
        if (bad++ == 0) UNSCOPED_INFO("channel " << c << ": mean " << mean[c] << " var " << var[c]);
      }
    }
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t c = channel(i);
      const LD xv = Type<T>::decode(x[i]);
      const LD root = std::sqrt(ref_var[c] + LD(epsilon));
      const double ref = double((xv - ref_mean[c]) / root * scale[c] + bias[c]);
      const LD a = scale[c] / root;
      const double magnitude = 2 * double(std::fabs(xv * a) + std::fabs(ref_mean[c] * a) + std::fabs(LD(bias[c])));
      if (!testing::close_to(y[i], ref, magnitude)) {
        if (bad++ == 0) UNSCOPED_INFO("element " << i << ": got " << Type<T>::decode(y[i]) << ", want " << ref);
      }
    }
    return bad;
  }
};

TEST_CASE("Training BN matches the spec formulas over channels, spatial tails and batches") {
  testing::sweep_every_type_against_reference<Case>();
}

TEST_CASE("Training BN on large tensors matches the spec formulas") {
  testing::Random rng;
  for (const NcsShape& s : testing::level_sweep()) {
    INFO("N=" << s.n << " C=" << s.c << " S=" << s.s);
    CHECK(Case<float>(s, rng).mismatches(false) == 0);
    CHECK(Case<f16>(s, rng).mismatches(true) == 0);
  }
}

TEST_CASE("Training BN keeps its precision on data far from zero") {
  testing::Random rng;
  CHECK(Case<float>({3, 4, 500}, rng, 999, 1001).mismatches(false) == 0);
  CHECK(Case<double>({3, 4, 500}, rng, 1e8 - 1, 1e8 + 1).mismatches(false) == 0);
  // Unshifted float64 sums would cancel about 42 of their 53 bits here
  // (moments.h), a variance off by about 1e-4. Chunk means carry float64's
  // rounding of 1e6 (1e-10), so the variance is held to 1e-9 here.
  CHECK(Case<float>({3, 4, 5000}, rng, 1e6 - 1, 1e6 + 1).mismatches(false, 1e-9) == 0);
  CHECK(Case<float>({40, 2, 49}, rng, 1e6 - 1, 1e6 + 1).mismatches(false, 1e-9) == 0);
}

// The level sweep, plus N = 1 shapes: channels of one row take the
// one-pass path (row_norm.h) up to kSegmentElements (16384) elements.
std::vector<NcsShape> train_sweep() {
  std::vector<NcsShape> shapes = testing::level_sweep();
  for (const NcsShape& s : {NcsShape{1, 5, 70}, NcsShape{1, 3, 3136}, NcsShape{1, 67, 2049},
                            NcsShape{1, 2, 16384}, NcsShape{1, 2, 16385}, NcsShape{1, 40, 1000}}) {
    shapes.push_back(s);
  }
  return shapes;
}

template <class T>
void check_same_everywhere() {
  testing::Random rng;
  for (const NcsShape& s : train_sweep()) {
    const Case<T> c(s, rng);
    testing::check_same_bits_everywhere(
        [&] {
          std::vector<T> y = testing::nan_filled<T>(c.x.size());
          std::vector<double> mean(s.c), var(s.c);
          Kernels<T>::train(c.x.data(), y.data(), s, {c.scale.data(), c.bias.data(), c.epsilon}, mean.data(),
                            var.data());
          std::vector<uint64_t> bits;
          for (size_t k = 0; k < s.c; ++k) {
            bits.push_back(testing::bits_of(mean[k]));
            bits.push_back(testing::bits_of(var[k]));
          }
          for (const T& v : y) bits.push_back(Type<T>::bits(v));
          return bits;
        },
        testing::describe<T>(s));
  }
}

TEST_CASE("Training BN gives the same bits at every SIMD level, thread count and store kind") {
  check_same_everywhere<float>();
  check_same_everywhere<double>();
  check_same_everywhere<f16>();
  check_same_everywhere<bf16>();
}

template <class T>
void check_batch_stats_equal_train(NcsShape shape, testing::Random& rng) {
  const Case<T> c(shape, rng);
  std::vector<double> mean1(shape.c), var1(shape.c), mean2(shape.c), var2(shape.c);
  std::vector<T> y(c.x.size());
  Kernels<T>::stats(c.x.data(), c.shape, mean1.data(), var1.data());
  Kernels<T>::train(c.x.data(), y.data(), c.shape, {c.scale.data(), c.bias.data(), c.epsilon},
                    mean2.data(), var2.data());
  INFO(Type<T>::name << " N=" << shape.n << " C=" << shape.c << " S=" << shape.s);
  CHECK(mean1 == mean2);
  CHECK(var1 == var2);
  CHECK(c.mismatches(false) == 0);
}

// Also where training takes the one-pass path of N = 1 (row_norm.h): its
// statistics must still be bn_batch_stats' bits.
TEST_CASE("bn_batch_stats gives the statistics bn_train uses") {
  testing::Random rng;
  // (Beyond 16 segments of 16384, bn_batch_stats merges them in pieces,
  // which a row's span_moments would not give bit for bit.)
  for (const NcsShape& s : {NcsShape{2, 5, 70}, NcsShape{1, 5, 70}, NcsShape{1, 3, 3136},
                            NcsShape{1, 2, 16384}, NcsShape{1, 2, 16385},
                            NcsShape{1, 1, 16 * 16384 + 4097}}) {
    check_batch_stats_equal_train<float>(s, rng);
    check_batch_stats_equal_train<double>(s, rng);
    check_batch_stats_equal_train<f16>(s, rng);
    check_batch_stats_equal_train<bf16>(s, rng);
  }
}

TEST_CASE("A constant channel has zero variance and normalizes to its bias") {
  testing::Random rng;
  Case<float> c({3, 2, 50}, rng);
  for (size_t n = 0; n < 3; ++n) {
    for (size_t s = 0; s < 50; ++s) c.x[(n * 2 + 1) * 50 + s] = 0.3f;
  }
  std::vector<float> y(c.x.size());
  std::vector<double> mean(2), var(2);
  bn_train_f32(c.x.data(), y.data(), c.shape, {c.scale.data(), c.bias.data(), c.epsilon},
               mean.data(), var.data());
  CHECK(mean[1] == double{0.3f});
  CHECK(var[1] == 0);
  for (size_t n = 0; n < 3; ++n) {
    for (size_t s = 0; s < 50; ++s) CHECK(y[(n * 2 + 1) * 50 + s] == c.bias[1]);
  }
  c.epsilon = 0;  // 0 / 0
  bn_train_f32(c.x.data(), y.data(), c.shape, {c.scale.data(), c.bias.data(), c.epsilon},
               mean.data(), var.data());
  CHECK(std::isnan(y[50]));
  CHECK(std::isfinite(y[0]));
}

TEST_CASE("An infinity or a NaN poisons its own channel only") {
  testing::Random rng;
  Case<float> c({2, 3, 40}, rng);
  c.x[45] = std::numeric_limits<float>::infinity();   // channel 1
  c.x[100] = std::numeric_limits<float>::quiet_NaN();  // channel 2
  std::vector<float> y(c.x.size());
  std::vector<double> mean(3), var(3);
  bn_train_f32(c.x.data(), y.data(), c.shape, {c.scale.data(), c.bias.data(), c.epsilon},
               mean.data(), var.data());
  CHECK(std::isinf(mean[1]));
  CHECK(std::isnan(var[1]));
  CHECK(std::isnan(mean[2]));
  CHECK(std::isfinite(mean[0]));
  for (size_t i = 0; i < y.size(); ++i) CHECK(std::isfinite(y[i]) == (c.channel(i) == 0));
}

TEST_CASE("The running statistics mix input and current with the momentum") {
  const std::vector<double> input = {1, 2, -4};
  const std::vector<double> current = {3, 2, 4};
  std::vector<double> out(3);
  bn_running_update(input.data(), current.data(), out.data(), 3, 0.75);
  CHECK(out[0] == 1.5);
  CHECK(out[1] == 2);
  CHECK(out[2] == -2);
  std::vector<double> in_place = input;
  bn_running_update(in_place.data(), current.data(), in_place.data(), 3, 0.75);
  CHECK(in_place == out);
}

}  // namespace
}  // namespace bnorm::kernels
