// Activations that can follow a normalization in the same pass (DirectML's
// FusedActivation), with the ONNX definitions:
//
//   Relu                max(0, x)
//   LeakyRelu(alpha)    x < 0 ? alpha * x : x
//   Elu(alpha)          x < 0 ? alpha * (exp(x) - 1) : x
//   Selu(alpha, gamma)  x > 0 ? gamma * x : gamma * (alpha * exp(x) - alpha)
//   Celu(alpha)         max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
//   Sigmoid             1 / (1 + exp(-x))
//   HardSigmoid(a, b)   max(0, min(1, a * x + b))
//   HardSwish           x * max(0, min(1, x / 6 + 0.5))
//   Tanh                tanh(x)
//   Softplus            log(exp(x) + 1)
//   Softsign            x / (1 + |x|)
//   ThresholdedRelu(a)  x > a ? x : 0
//   Clip(min, max)      min(max(x, min), max): max everywhere when min > max
//   SiLU                x * Sigmoid(x): the Sigmoid and Mul nodes of a SiLU
//                       (Swish) written out, each result rounded to S as
//                       those nodes round it
//
// activate<K>() is THE definition: the scalar apply_activation(), the
// standalone kernels below and the fused normalization kernels all
// evaluate it, so float and double results of "normalize, then activate"
// and of the fused kernel are bitwise equal. (For f16/bf16 data the fused
// kernel activates the float result before its single rounding.)
//
// Evaluation choices, all the same mathematical function:
//  - exp(x) - 1 is computed as expm1(x), without cancellation near 0;
//    Celu is written x > 0 ? x : alpha * expm1(x / alpha) (alpha != 0).
//  - Softplus is x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)), which does not
//    overflow to infinity for x > 88 in float.
//  - A NaN input gives NaN in every activation (comparisons are arranged so
//    that NaN takes the "x" branch); other IEEE specials follow the formula
//    as written (HardSwish(-inf) and Softsign(+-inf) are NaN).
//  - ONNX attributes are float32, so the defaults below are float values.
//
// Relu, LeakyRelu, HardSigmoid, HardSwish, ThresholdedRelu, Clip and
// Softsign are also evaluated on SIMD vectors (V a GCC vector of S); the
// others call the C math library one element at a time.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/half.h"

namespace bnorm::kernels {

enum class ActivationKind : uint8_t {
  None,
  Relu,
  LeakyRelu,
  Elu,
  Selu,
  Celu,
  Sigmoid,
  HardSigmoid,
  HardSwish,
  Tanh,
  Softplus,
  Softsign,
  ThresholdedRelu,
  Clip,
  SiLU,
};

// The ONNX operator name ("LeakyRelu", ...; "None" for None).
const char* activation_name(ActivationKind kind) noexcept;

// An activation and its parameters: alpha is LeakyRelu/Elu/Selu/Celu/
// HardSigmoid/ThresholdedRelu's alpha and Clip's min; beta is Selu's gamma,
// HardSigmoid's beta and Clip's max.
struct Activation {
  ActivationKind kind = ActivationKind::None;
  double alpha = 0;
  double beta = 0;

  static Activation none() noexcept { return {}; }
  static Activation relu() noexcept { return {ActivationKind::Relu, 0, 0}; }
  static Activation leaky_relu(double alpha = double{0.01f}) noexcept {
    return {ActivationKind::LeakyRelu, alpha, 0};
  }
  static Activation elu(double alpha = 1.0) noexcept { return {ActivationKind::Elu, alpha, 0}; }
  static Activation selu(double alpha = double{1.67326319217681884765625f},
                         double gamma = double{1.05070102214813232421875f}) noexcept {
    return {ActivationKind::Selu, alpha, gamma};
  }
  static Activation celu(double alpha = 1.0) noexcept { return {ActivationKind::Celu, alpha, 0}; }
  static Activation sigmoid() noexcept { return {ActivationKind::Sigmoid, 0, 0}; }
  static Activation hard_sigmoid(double alpha = double{0.2f}, double beta = 0.5) noexcept {
    return {ActivationKind::HardSigmoid, alpha, beta};
  }
  static Activation hard_swish() noexcept { return {ActivationKind::HardSwish, 0, 0}; }
  static Activation tanh() noexcept { return {ActivationKind::Tanh, 0, 0}; }
  static Activation softplus() noexcept { return {ActivationKind::Softplus, 0, 0}; }
  static Activation softsign() noexcept { return {ActivationKind::Softsign, 0, 0}; }
  static Activation thresholded_relu(double alpha = 1.0) noexcept {
    return {ActivationKind::ThresholdedRelu, alpha, 0};
  }
  static Activation silu() noexcept { return {ActivationKind::SiLU, 0, 0}; }
  static Activation clip(double min = -std::numeric_limits<double>::infinity(),
                         double max = std::numeric_limits<double>::infinity()) noexcept {
    return {ActivationKind::Clip, min, max};
  }
};

// Whether activate<K> also accepts SIMD vectors.
constexpr bool activation_is_vectorized(ActivationKind kind) noexcept {
  switch (kind) {
    case ActivationKind::None:
    case ActivationKind::Relu:
    case ActivationKind::LeakyRelu:
    case ActivationKind::HardSigmoid:
    case ActivationKind::HardSwish:
    case ActivationKind::ThresholdedRelu:
    case ActivationKind::Clip:
    case ActivationKind::Softsign:
      return true;
    default:
      return false;
  }
}

namespace activation_detail {

// s in every lane of V (V == S for scalars).
template <class V, class S>
inline V fill(S s) noexcept {
  if constexpr (std::is_same_v<V, S>) {
    return s;
  } else {
    V v;
    for (size_t k = 0; k < sizeof(V) / sizeof(S); ++k) v[k] = s;
    return v;
  }
}

template <class V, class S>
inline V clamp01(const V& v) noexcept {
  const V zero = fill<V>(S(0));
  const V one = fill<V>(S(1));
  return v < zero ? zero : (v > one ? one : v);
}

}  // namespace activation_detail

// Activation K of x (S = float or double; V = S, or a vector of S for the
// kinds where activation_is_vectorized(K)); alpha and beta as in Activation.
template <ActivationKind K, class V, class S>
inline V activate(const V& x, S alpha, S beta) noexcept {
  using activation_detail::clamp01;
  using activation_detail::fill;
  const V zero = fill<V>(S(0));
  if constexpr (K == ActivationKind::None) {
    return x;
  } else if constexpr (K == ActivationKind::Relu) {
    return x < zero ? zero : x;
  } else if constexpr (K == ActivationKind::LeakyRelu) {
    return x < zero ? x * fill<V>(alpha) : x;
  } else if constexpr (K == ActivationKind::HardSigmoid) {
    return clamp01<V, S>(x * fill<V>(alpha) + fill<V>(beta));
  } else if constexpr (K == ActivationKind::HardSwish) {
    return x * clamp01<V, S>(x / fill<V>(S(6)) + fill<V>(S(0.5)));
  } else if constexpr (K == ActivationKind::ThresholdedRelu) {
    return x <= fill<V>(alpha) ? zero : x;
  } else if constexpr (K == ActivationKind::Clip) {
    // Min(max, Max(x, min)), as Clip-13 defines it: min > max gives max
    // everywhere (docs/semantics.md); NaN stays NaN.
    const V lo = fill<V>(alpha);
    const V hi = fill<V>(beta);
    const V up = x < lo ? lo : x;
    return up > hi ? hi : up;
  } else if constexpr (K == ActivationKind::Softsign) {
    return x / (fill<V>(S(1)) + (x < zero ? -x : x));
  } else {
    static_assert(std::is_same_v<V, S>, "this activation is evaluated one element at a time");
    if constexpr (K == ActivationKind::Elu) {
      return x < 0 ? alpha * std::expm1(x) : x;
    } else if constexpr (K == ActivationKind::Selu) {
      return x > 0 ? beta * x : beta * (alpha * std::expm1(x));
    } else if constexpr (K == ActivationKind::Celu) {
      return x > 0 ? x : alpha * std::expm1(x / alpha);
    } else if constexpr (K == ActivationKind::Sigmoid) {
      return S(1) / (S(1) + std::exp(-x));
    } else if constexpr (K == ActivationKind::SiLU) {
      const S sigmoid = activate<ActivationKind::Sigmoid>(x, alpha, beta);
      return x * sigmoid;
    } else if constexpr (K == ActivationKind::Tanh) {
      return std::tanh(x);
    } else {
      static_assert(K == ActivationKind::Softplus);
      return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
  }
}

// activate<kind>(x, alpha, beta) for a kind known at run time (S = float or
// double).
template <class S>
inline S apply_activation(ActivationKind kind, S x, S alpha, S beta) noexcept {
  using K = ActivationKind;
  switch (kind) {
    case K::None: return x;
    case K::Relu: return activate<K::Relu>(x, alpha, beta);
    case K::LeakyRelu: return activate<K::LeakyRelu>(x, alpha, beta);
    case K::Elu: return activate<K::Elu>(x, alpha, beta);
    case K::Selu: return activate<K::Selu>(x, alpha, beta);
    case K::Celu: return activate<K::Celu>(x, alpha, beta);
    case K::Sigmoid: return activate<K::Sigmoid>(x, alpha, beta);
    case K::HardSigmoid: return activate<K::HardSigmoid>(x, alpha, beta);
    case K::HardSwish: return activate<K::HardSwish>(x, alpha, beta);
    case K::Tanh: return activate<K::Tanh>(x, alpha, beta);
    case K::Softplus: return activate<K::Softplus>(x, alpha, beta);
    case K::Softsign: return activate<K::Softsign>(x, alpha, beta);
    case K::ThresholdedRelu: return activate<K::ThresholdedRelu>(x, alpha, beta);
    case K::Clip: return activate<K::Clip>(x, alpha, beta);
    case K::SiLU: return activate<K::SiLU>(x, alpha, beta);
  }
  return x;
}

// The activation of x, its parameters rounded to S (exact for ONNX's float
// attributes).
template <class S>
inline S apply_activation(S x, const Activation& act) noexcept {
  return apply_activation(act.kind, x, static_cast<S>(act.alpha), static_cast<S>(act.beta));
}

// Standalone kernels: y[i] = activation(x[i]) for i < n; y == x allowed,
// otherwise no overlap. f16/bf16 compute in float and round once.
void activation_f32(const float* x, float* y, size_t n, const Activation& act) noexcept;
void activation_f64(const double* x, double* y, size_t n, const Activation& act) noexcept;
void activation_f16(const f16* x, f16* y, size_t n, const Activation& act) noexcept;
void activation_bf16(const bf16* x, bf16* y, size_t n, const Activation& act) noexcept;

}  // namespace bnorm::kernels
