// Inference BatchNormalization against the spec formula
//   Y = (X - mean) / sqrt(var + epsilon) * scale + B
// evaluated in double here, for every data type, over channel counts,
// spatial sizes with tails, batch sizes, in place, with fused activations
// and IEEE specials; and bit for bit across SIMD levels and threads.
#include "kernels/bn_infer.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/affine.h"
#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::Type;

template <class T>
struct Kernels {
  static constexpr auto infer = testing::by_type<T>(bn_infer_f32, bn_infer_f64, bn_infer_f16, bn_infer_bf16);
  static constexpr auto nonspatial = testing::by_type<T>(bn_infer_nonspatial_f32, bn_infer_nonspatial_f64,
                                                         bn_infer_nonspatial_f16, bn_infer_nonspatial_bf16);
  static constexpr auto activation =
      testing::by_type<T>(activation_f32, activation_f64, activation_f16, activation_bf16);
};

// One input: data and parameters (C values each, C * S when non-spatial).
template <class T>
struct Case {
  using P = typename Type<T>::Compute;
  NcsShape shape;
  bool nonspatial = false;
  std::vector<T> x;
  std::vector<P> scale, bias, mean, var;
  P epsilon = P(1e-5);

  Case(NcsShape s, testing::Random& rng, bool nonspatial_params = false)
      : shape(s), nonspatial(nonspatial_params) {
    const size_t params = nonspatial ? s.c * s.s : s.c;
    x = testing::random_values<T>(rng, s.elements(), -3, 3);
    scale = testing::random_values<P>(rng, params, -2, 2);
    bias = testing::random_values<P>(rng, params, -1, 1);
    mean = testing::random_values<P>(rng, params, -1, 1);
    var = testing::random_values<P>(rng, params, 0.05, 2);
  }

  BnInferParams<P> params() const { return {scale.data(), bias.data(), mean.data(), var.data(), epsilon}; }
  size_t param_index(size_t i) const {
    return nonspatial ? i % (shape.c * shape.s) : (i / shape.s) % shape.c;
  }

  void run(const T* in, T* out, const Activation& act = {}) const {
    (nonspatial ? Kernels<T>::nonspatial : Kernels<T>::infer)(in, out, shape, params(), act);
  }

  // The spec formula in double, then the activation; `magnitude` bounds the
  // terms a float evaluation sums.
  double reference(size_t i, const Activation& act, double* magnitude = nullptr) const {
    const size_t k = param_index(i);
    const double xv = Type<T>::decode(x[i]);
    const double a = double(scale[k]) / std::sqrt(double(var[k]) + double(epsilon));
    const double y = (xv - mean[k]) / std::sqrt(double(var[k]) + double(epsilon)) * scale[k] + bias[k];
    if (magnitude) *magnitude = 2 * (std::fabs(xv * a) + std::fabs(mean[k] * a) + std::fabs(bias[k]));
    return apply_activation(y, act);
  }

  // Runs into a NaN-filled buffer (or in place) and counts the elements
  // off the reference.
  size_t mismatches(bool in_place, const Activation& act = {}) const {
    std::vector<T> y = in_place ? x : testing::nan_filled<T>(x.size());
    run(in_place ? y.data() : x.data(), y.data(), act);
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double magnitude = 0;
      const double ref = reference(i, act, &magnitude);
      if (!testing::close_to(y[i], ref, magnitude)) {
        if (bad == 0) UNSCOPED_INFO("element " << i << ": got " << Type<T>::decode(y[i]) << ", want " << ref);
        ++bad;
      }
    }
    return bad;
  }
};

TEST_CASE("Inference BN matches the spec formula over channels, spatial tails and batches") {
  testing::sweep_every_type_against_reference<Case>();
}

TEST_CASE("The non-spatial form normalizes each (c, s) position with its own parameters") {
  testing::Random rng;
  for (NcsShape s : {NcsShape{1, 1, 1}, NcsShape{3, 4, 5}, NcsShape{2, 67, 17}, NcsShape{40, 3, 100}}) {
    INFO("N=" << s.n << " C=" << s.c << " S=" << s.s);
    CHECK(Case<float>(s, rng, true).mismatches(false) == 0);
    CHECK(Case<double>(s, rng, true).mismatches(true) == 0);
    CHECK(Case<f16>(s, rng, true).mismatches(false) == 0);
    CHECK(Case<bf16>(s, rng, true).mismatches(true) == 0);
  }
}

// x * scale + shift in P, rounded once (std::fma).
template <class P>
P affine_expression(P x, const Affine<P>& f) {
  return std::fma(x, f.scale, f.shift);
}

template <class T>
void check_equals_affine_expression() {
  testing::Random rng;
  testing::SettingsGuard guard;
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    for (const NcsShape& s : testing::level_sweep()) {
      const Case<T> c(s, rng);
      std::vector<T> y = testing::nan_filled<T>(c.x.size());
      c.run(c.x.data(), y.data());
      size_t bad = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        const size_t k = c.param_index(i);
        const Affine<T> f = to_affine(c.scale[k], c.bias[k], c.mean[k], c.var[k], c.epsilon);
        bad += testing::bits_of(y[i]) != testing::bits_of(affine_expression(c.x[i], f));
      }
      INFO(Type<T>::name << " at " << isa_name(isa) << " N=" << s.n << " C=" << s.c << " S=" << s.s);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("Inference BN on float and double data equals fma(x, scale, shift) bit for bit") {
  check_equals_affine_expression<float>();
  check_equals_affine_expression<double>();
}

// At the Avx512 level, float16 kernels run the Avx2 level's 256-bit
// conversions unless wide_f16 is on (isa.h): either way, the same bits.
TEST_CASE("float16 kernels give the same bits with 512-bit and 256-bit conversions") {
  testing::Random rng;
  testing::SettingsGuard guard;
  if (detected_isa() != Isa::Avx512) return;
  set_active_isa(Isa::Avx512);
  set_wide_f16(false);
  REQUIRE(f16_isa() == Isa::Avx2);
  set_wide_f16(true);
  REQUIRE(f16_isa() == Isa::Avx512);
  for (const NcsShape& s : testing::level_sweep()) {
    const Case<f16> c(s, rng);
    std::vector<uint64_t> bits[2];
    for (bool wide : {false, true}) {
      set_wide_f16(wide);
      std::vector<f16> y = testing::nan_filled<f16>(c.x.size());
      c.run(c.x.data(), y.data(), Activation{});
      for (const f16& v : y) bits[wide].push_back(Type<f16>::bits(v));
    }
    CHECK(bits[0] == bits[1]);
  }
}

// Every (level, threads, streaming) combination against the first.
template <class T>
void check_same_everywhere(const Activation& act) {
  testing::Random rng;
  for (const NcsShape& s : testing::level_sweep()) {
    const Case<T> c(s, rng);
    testing::check_same_bits_everywhere(
        [&] {
          std::vector<T> y = testing::nan_filled<T>(c.x.size());
          c.run(c.x.data(), y.data(), act);
          return testing::bits_of_all(y);
        },
        testing::describe<T>(s) + " " + activation_name(act.kind));
  }
}

TEST_CASE("Inference BN gives the same bits at every SIMD level, thread count and store kind") {
  for (const Activation& act : {Activation::none(), Activation::relu(), Activation::tanh()}) {
    check_same_everywhere<float>(act);
    check_same_everywhere<double>(act);
    check_same_everywhere<f16>(act);
    check_same_everywhere<bf16>(act);
  }
}

const std::vector<Activation>& activations() {
  static const std::vector<Activation> acts = {
      Activation::relu(),         Activation::leaky_relu(),   Activation::elu(0.5),
      Activation::selu(),         Activation::celu(1.5),      Activation::sigmoid(),
      Activation::hard_sigmoid(), Activation::hard_swish(),   Activation::tanh(),
      Activation::softplus(),     Activation::softsign(),     Activation::thresholded_relu(0.5),
      Activation::clip(-0.5, 1.0)};
  return acts;
}

template <class T>
void check_fused_equals_unfused() {
  testing::Random rng;
  for (const Activation& act : activations()) {
    for (NcsShape s : {NcsShape{2, 5, 33}, NcsShape{3, 67, 1}, NcsShape{1, 3, 1000}}) {
      const Case<T> c(s, rng);
      std::vector<T> fused = testing::nan_filled<T>(c.x.size());
      std::vector<T> unfused = testing::nan_filled<T>(c.x.size());
      c.run(c.x.data(), fused.data(), act);
      c.run(c.x.data(), unfused.data());
      Kernels<T>::activation(unfused.data(), unfused.data(), unfused.size(), act);
      size_t bad = 0;
      for (size_t i = 0; i < fused.size(); ++i) bad += Type<T>::bits(fused[i]) != Type<T>::bits(unfused[i]);
      INFO(Type<T>::name << " " << activation_name(act.kind) << " N=" << s.n << " C=" << s.c << " S=" << s.s);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("Fused BN and activation equals BN then the activation kernel bit for bit") {
  check_fused_equals_unfused<float>();
  check_fused_equals_unfused<double>();
}

TEST_CASE("Fused BN and activation matches the reference for every type") {
  testing::Random rng;
  for (const Activation& act : activations()) {
    for (NcsShape s : {NcsShape{2, 5, 33}, NcsShape{3, 67, 1}, NcsShape{1, 3, 100}}) {
      INFO(activation_name(act.kind) << " N=" << s.n << " C=" << s.c << " S=" << s.s);
      CHECK(Case<float>(s, rng).mismatches(false, act) == 0);
      CHECK(Case<double>(s, rng).mismatches(true, act) == 0);
      CHECK(Case<f16>(s, rng).mismatches(false, act) == 0);
      CHECK(Case<bf16>(s, rng).mismatches(true, act) == 0);
    }
  }
}

TEST_CASE("NaN and infinite inputs stay where they are and follow IEEE") {
  testing::Random rng;
  Case<float> c({2, 3, 40}, rng);
  const float inf = std::numeric_limits<float>::infinity();
  c.x[5] = std::numeric_limits<float>::quiet_NaN();
  c.x[50] = inf;
  c.x[130] = -inf;
  c.scale[0] = 2.0f;
  c.scale[1] = -0.5f;
  c.scale[2] = 1.5f;
  CHECK(c.mismatches(false) == 0);
  std::vector<float> y(c.x.size());
  c.run(c.x.data(), y.data());
  CHECK(std::isnan(y[5]));
  CHECK(y[50] == -inf);   // channel 1, negative scale
  CHECK(y[130] == -inf);  // channel 0 of n = 1, positive scale
  for (size_t i = 0; i < y.size(); ++i) {
    if (i != 5 && i != 50 && i != 130) CHECK(std::isfinite(y[i]));
  }
}

TEST_CASE("Zero variance with zero epsilon gives non-finite outputs, as dividing by zero does") {
  testing::Random rng;
  Case<float> c({2, 4, 9}, rng);
  c.epsilon = 0;
  c.var[2] = 0;
  c.var[3] = -1;  // var + epsilon < 0: sqrt is NaN
  std::vector<float> y(c.x.size());
  c.run(c.x.data(), y.data());
  for (size_t n = 0; n < 2; ++n) {
    for (size_t s = 0; s < 9; ++s) {
      CHECK(!std::isfinite(y[(n * 4 + 2) * 9 + s]));
      CHECK(std::isnan(y[(n * 4 + 3) * 9 + s]));
      CHECK(std::isfinite(y[(n * 4 + 1) * 9 + s]));
    }
  }
}

TEST_CASE("A huge epsilon leaves the bias") {
  testing::Random rng;
  Case<double> d({2, 3, 17}, rng);
  d.epsilon = 1e300;
  CHECK(d.mismatches(false) == 0);
  Case<float> f({2, 3, 17}, rng);
  f.epsilon = 1e30f;
  CHECK(f.mismatches(true) == 0);
}

}  // namespace
}  // namespace bnorm::kernels
