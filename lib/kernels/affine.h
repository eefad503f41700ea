// The BatchNormalization math, once, for every user in bnorm (evaluator,
// folder, inspector): inference BN per channel is one multiply-add,
//
//   Y = (X - mean) / sqrt(var + eps) * s + B  =  X * scale + shift
//   scale = s / sqrt(var + eps)
//   shift = B - mean * scale
//
// computed here in the caller's precision (double for folding, float for
// the float kernels). Zero variance with eps = 0 gives inf/NaN per IEEE.
#pragma once

#include <cmath>

namespace bnorm::kernels {

template <typename T>
struct Affine {
  T scale;
  T shift;
};

template <typename T>
inline Affine<T> to_affine(T s, T b, T mean, T var, T eps) noexcept {
  const T scale = s / std::sqrt(var + eps);
  return {scale, b - mean * scale};
}

}  // namespace bnorm::kernels
