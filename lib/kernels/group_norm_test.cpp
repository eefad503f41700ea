// GroupNormalization (group_norm.h) against the spec formula evaluated in
// long double, for every storage type, over channel counts, every group
// count dividing them, spatial tails and batches, in place; with one group
// per channel, InstanceNormalization's bits; the same bits at every SIMD
// level, thread count and store kind.
#include "kernels/group_norm.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <vector>

#include "kernels/instance_norm.h"
#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::Type;

template <class T>
void run_kernel(const T* x, T* y, NcsShape s, size_t g, const NormParams<typename Type<T>::Compute>& p) {
  testing::by_type<T>(group_norm_f32, group_norm_f64, group_norm_f16, group_norm_bf16)(x, y, s, g, p);
}

template <class T>
struct Case : testing::ScaledInputs<T> {
  using Base = testing::ScaledInputs<T>;
  using Base::shape, Base::x, Base::scale, Base::bias, Base::epsilon;
  size_t groups;

  Case(NcsShape s, size_t g, testing::Random& rng, double lo = -3, double hi = 3)
      : Base(s, s.c, rng, lo, hi), groups(g) {}

  std::vector<T> run(bool in_place) const {
    std::vector<T> y = in_place ? x : testing::nan_filled<T>(x.size());
    run_kernel<T>(in_place ? y.data() : x.data(), y.data(), shape, groups, {scale.data(), bias.data(), epsilon});
    return y;
  }

  size_t mismatches(const std::vector<T>& y) const {
    return testing::standardized_mismatches(
        x, y, shape.n * groups, shape.c / groups * shape.s, [&](size_t at) { return at / shape.s % shape.c; }, scale,
        bias, epsilon);
  }
};

template <class T>
void sweep() {
  testing::Random rng;
  for (size_t n : {1, 2}) {
    for (size_t c : {1, 2, 3, 4, 6, 8, 12, 32}) {
      for (size_t s : {1, 2, 7, 16, 17, 65, 100}) {
        for (size_t g = 1; g <= c; ++g) {
          if (c % g != 0) continue;
          const Case<T> k({n, c, s}, g, rng);
          INFO(Type<T>::name << " N=" << n << " C=" << c << " S=" << s << " G=" << g);
          CHECK(k.mismatches(k.run(false)) == 0);
          CHECK(k.mismatches(k.run(true)) == 0);
        }
      }
    }
  }
}

TEST_CASE("GroupNormalization matches the spec formula over channels, groups, spatial tails and batches",
          "[kernels][normfamily]") {
  sweep<float>();
  sweep<double>();
  sweep<f16>();
  sweep<bf16>();
}

TEST_CASE("GroupNormalization on large tensors and far from zero matches the spec formula", "[kernels][normfamily]") {
  testing::Random rng;
  const Case<float> big({2, 600, 300}, 20, rng);
  CHECK(big.mismatches(big.run(false)) == 0);
  const Case<bf16> wide({1, 512, 3}, 2, rng);  // 256 channels per group: more than one block of row ops
  CHECK(wide.mismatches(wide.run(true)) == 0);
  const Case<float> far({2, 4, 3000}, 2, rng, 1e6 - 1, 1e6 + 1);
  CHECK(far.mismatches(far.run(false)) == 0);
}

template <class T>
void same_as_instance_norm() {
  testing::Random rng;
  for (NcsShape s : {NcsShape{2, 3, 17}, NcsShape{1, 5, 3000}, NcsShape{3, 7, 1}}) {
    const Case<T> k(s, s.c, rng);
    std::vector<T> want(k.x.size());
    const NormParams<typename Type<T>::Compute> p{k.scale.data(), k.bias.data(), k.epsilon};
    if constexpr (std::is_same_v<T, float>) instance_norm_f32(k.x.data(), want.data(), s, p);
    if constexpr (std::is_same_v<T, double>) instance_norm_f64(k.x.data(), want.data(), s, p);
    if constexpr (std::is_same_v<T, f16>) instance_norm_f16(k.x.data(), want.data(), s, p);
    if constexpr (std::is_same_v<T, bf16>) instance_norm_bf16(k.x.data(), want.data(), s, p);
    const std::vector<T> got = k.run(false);
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += Type<T>::bits(got[i]) != Type<T>::bits(want[i]);
    INFO(Type<T>::name << " N=" << s.n << " C=" << s.c << " S=" << s.s);
    CHECK(differ == 0);
  }
}

TEST_CASE("GroupNormalization with one group per channel is InstanceNormalization bit for bit", "[kernels][normfamily]") {
  same_as_instance_norm<float>();
  same_as_instance_norm<double>();
  same_as_instance_norm<f16>();
  same_as_instance_norm<bf16>();
}

template <class T>
void check_same_everywhere() {
  testing::Random rng;
  for (NcsShape s : {NcsShape{2, 6, 17}, NcsShape{3, 8, 2000}, NcsShape{2, 64, 100}}) {
    const Case<T> k(s, 2, rng);
    testing::check_same_bits_everywhere([&] { return testing::bits_of_all(k.run(false)); }, testing::describe<T>(s));
  }
}

TEST_CASE("GroupNormalization gives the same bits at every SIMD level, thread count and store kind",
          "[kernels][normfamily]") {
  check_same_everywhere<float>();
  check_same_everywhere<double>();
  check_same_everywhere<f16>();
  check_same_everywhere<bf16>();
}

TEST_CASE("A constant group normalizes to the bias, or to NaN when epsilon is 0", "[kernels][normfamily]") {
  testing::Random rng;
  Case<float> k({1, 4, 10}, 2, rng);
  for (size_t i = 20; i < 40; ++i) k.x[i] = 3.5f;  // group 1: channels 2 and 3
  std::vector<float> y = k.run(false);
  for (size_t i = 20; i < 40; ++i) CHECK(y[i] == k.bias[i / 10]);
  k.epsilon = 0;
  y = k.run(false);
  for (size_t i = 20; i < 40; ++i) CHECK(std::isnan(y[i]));
  for (size_t i = 0; i < 20; ++i) CHECK(std::isfinite(y[i]));
}

}  // namespace
}  // namespace bnorm::kernels
