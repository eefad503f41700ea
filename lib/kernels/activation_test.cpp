// The activations against their ONNX formulas (a long double reference
// written here), and the kernels against the scalar definition, bit for bit.
#include "kernels/activation.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::bits_of;
using testing::close_to;
using testing::Type;
using K = ActivationKind;
using LD = long double;

const std::vector<Activation>& every_activation() {
  static const std::vector<Activation> acts = {
      Activation::none(),        Activation::relu(),
      Activation::leaky_relu(),  Activation::leaky_relu(-0.5),
      Activation::elu(),         Activation::elu(0.7),
      Activation::selu(),        Activation::celu(),
      Activation::celu(2.5),     Activation::sigmoid(),
      Activation::hard_sigmoid(), Activation::hard_sigmoid(0.5, 0.25),
      Activation::hard_swish(),  Activation::tanh(),
      Activation::softplus(),    Activation::softsign(),
      Activation::thresholded_relu(), Activation::thresholded_relu(-0.25),
      Activation::clip(),        Activation::clip(-1.5, 0.75)};
  return acts;
}

std::string describe(const Activation& a) {
  return std::string(activation_name(a.kind)) + "(" + std::to_string(a.alpha) + ", " +
         std::to_string(a.beta) + ")";
}

// The ONNX formulas as written in the operator specs.
LD onnx_formula(const Activation& act, LD x) {
  const LD a = act.alpha;
  const LD b = act.beta;
  switch (act.kind) {
    case K::None: return x;
    case K::Relu: return std::fmax(LD(0), x);
    case K::LeakyRelu: return x < 0 ? a * x : x;
    case K::Elu: return x < 0 ? a * (std::exp(x) - 1) : x;
    case K::Selu: return x > 0 ? b * x : b * (a * std::exp(x) - a);
    case K::Celu: return std::fmax(LD(0), x) + std::fmin(LD(0), a * (std::exp(x / a) - 1));
    case K::Sigmoid: return 1 / (1 + std::exp(-x));
    case K::HardSigmoid: return std::fmax(LD(0), std::fmin(LD(1), a * x + b));
    case K::HardSwish: return x * std::fmax(LD(0), std::fmin(LD(1), x / 6 + LD(0.5)));
    case K::Tanh: return std::tanh(x);
    case K::Softplus: return std::log(std::exp(x) + 1);
    case K::Softsign: return x / (1 + std::fabs(x));
    case K::ThresholdedRelu: return x > a ? x : 0;
    case K::Clip: return std::fmin(std::fmax(x, a), b);
  }
  return x;
}

// Inputs: a grid over [-30, 30], values near 0 and the thresholds,
// infinities.
std::vector<double> probe_inputs() {
  std::vector<double> xs;
  for (double x = -30; x <= 30; x += 0.37) xs.push_back(x);
  for (double x : {0.0, -0.0, 1e-7, -1e-7, 1e-3, -1e-3, 0.25, -0.25, 3.0, -3.0, 0.75, -1.5, 100.0,
                   -100.0}) {
    xs.push_back(x);
  }
  xs.push_back(std::numeric_limits<double>::infinity());
  xs.push_back(-std::numeric_limits<double>::infinity());
  return xs;
}

TEST_CASE("Every activation matches its ONNX formula in float and in double") {
  for (const Activation& act : every_activation()) {
    for (double x : probe_inputs()) {
      INFO(describe(act) << " at x = " << x);
      const auto xf = static_cast<float>(x);
      const LD ref_f = onnx_formula(act, xf);
      const LD ref_d = onnx_formula(act, x);
      CHECK(close_to(apply_activation(xf, act), static_cast<double>(ref_f)));
      CHECK(close_to(apply_activation(x, act), static_cast<double>(ref_d)));
    }
  }
}

TEST_CASE("Softplus does not overflow where exp(x) does") {
  CHECK(apply_activation(100.0f, Activation::softplus()) == 100.0f);
  CHECK(apply_activation(1000.0, Activation::softplus()) == 1000.0);
  CHECK(apply_activation(-200.0f, Activation::softplus()) == 0.0f);
}

TEST_CASE("A NaN input gives NaN in every activation") {
  for (const Activation& act : every_activation()) {
    INFO(describe(act));
    CHECK(std::isnan(apply_activation(std::numeric_limits<float>::quiet_NaN(), act)));
    CHECK(std::isnan(apply_activation(std::numeric_limits<double>::quiet_NaN(), act)));
  }
}

TEST_CASE("The ONNX defaults are the float32 attribute values") {
  CHECK(Activation::leaky_relu().alpha == double{0.01f});
  CHECK(Activation::hard_sigmoid().alpha == double{0.2f});
  CHECK(Activation::selu().alpha == double{1.67326319217681884765625f});
  CHECK(Activation::selu().beta == double{1.05070102214813232421875f});
  CHECK(std::string(activation_name(K::ThresholdedRelu)) == "ThresholdedRelu");
}

// The standalone kernel at every level, plain and streaming, in place or
// not, against apply_activation element by element, bit for bit.
template <class T, class Kernel>
void check_kernel_bitwise(const std::vector<T>& input, Kernel kernel) {
  using C = typename Type<T>::Compute;
  testing::SettingsGuard guard;
  for (const Activation& act : every_activation()) {
    std::vector<uint64_t> expected(input.size());
    for (size_t i = 0; i < input.size(); ++i) {
      const C x = static_cast<C>(Type<T>::decode(input[i]));
      expected[i] = Type<T>::bits(Type<T>::encode(apply_activation(x, act)));
    }
    for (Isa isa : testing::available_isas()) {
      for (size_t threshold : {size_t{0}, size_t{1}}) {
        for (bool in_place : {false, true}) {
          set_active_isa(isa);
          set_streaming_threshold_bytes(threshold);
          INFO(describe(act) << " " << Type<T>::name << " at " << isa_name(isa) << ", streaming "
                             << (threshold == 1) << ", in place " << in_place);
          std::vector<T> out = in_place ? input : testing::nan_filled<T>(input.size());
          kernel(in_place ? out.data() : input.data(), out.data(), input.size(), act);
          size_t mismatches = 0;
          for (size_t i = 0; i < input.size(); ++i) mismatches += Type<T>::bits(out[i]) != expected[i];
          CHECK(mismatches == 0);
        }
      }
    }
  }
}

template <class T>
std::vector<T> kernel_inputs() {
  std::vector<T> v;
  for (double x : probe_inputs()) v.push_back(Type<T>::encode(x));
  v.push_back(Type<T>::encode(std::numeric_limits<double>::quiet_NaN()));
  testing::Random rng;
  for (int i = 0; i < 5000; ++i) v.push_back(Type<T>::encode(rng.uniform(-8, 8)));
  return v;
}

TEST_CASE("The f32 and f64 activation kernels equal apply_activation bit for bit") {
  check_kernel_bitwise(kernel_inputs<float>(), activation_f32);
  check_kernel_bitwise(kernel_inputs<double>(), activation_f64);
}

TEST_CASE("The f16 and bf16 activation kernels round the float activation once, for every input") {
  std::vector<f16> halves;
  std::vector<bf16> brains;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    halves.push_back(f16{static_cast<uint16_t>(b)});
    brains.push_back(bf16{static_cast<uint16_t>(b)});
  }
  check_kernel_bitwise(halves, activation_f16);
  check_kernel_bitwise(brains, activation_bf16);
}

TEST_CASE("The activation kernels handle every length up to a few vectors") {
  for (size_t n = 0; n <= 67; ++n) {
    std::vector<float> x(n + 1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 30.5f;
    std::vector<float> y = testing::nan_filled<float>(n + 1);
    activation_f32(x.data(), y.data(), n, Activation::relu());
    for (size_t i = 0; i < n; ++i) CHECK(y[i] == std::fmax(0.0f, x[i]));
    CHECK(std::isnan(y[n]));
  }
}

}  // namespace
}  // namespace bnorm::kernels
