// BatchNormalization in inference mode on [N, C, S] data (layout.h), with
// an optional fused activation (activation.h):
//
//   y[n, c, s] = act(fma(x[n, c, s], scale_c, shift_c))
//   scale_c, shift_c = to_affine(scale[c], bias[c], mean[c], var[c], epsilon)
//
// to_affine (affine.h) runs in float for f32/f16/bf16 data and in double
// for f64, each product and sum rounded once to that type; y equals
// std::fma(x, scale_c, shift_c) in that type (one rounding), bit for bit,
// at every SIMD level. f16/bf16 data are decoded exactly and the
// result rounded once. Parameters are per-channel arrays of C elements, in
// float (double for f64): the caller converts other parameter types.
// Zero variance with epsilon = 0, NaN and infinities follow IEEE.
//
// bn_infer_nonspatial_*: the legacy spatial = 0 form (opset < 9), where
// every parameter array has C * S elements and only N is broadcast over;
// the same as bn_infer_* on the shape {N, C * S, 1}.
//
// y == x allowed, otherwise no overlap. Large tensors run on the OpenMP
// threads.
#pragma once

#include "kernels/activation.h"
#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::kernels {

void bn_infer_f32(const float* x, float* y, NcsShape shape, const BnInferParams<float>& p,
                  const Activation& act = {}) noexcept;
void bn_infer_f64(const double* x, double* y, NcsShape shape, const BnInferParams<double>& p,
                  const Activation& act = {}) noexcept;
void bn_infer_f16(const f16* x, f16* y, NcsShape shape, const BnInferParams<float>& p,
                  const Activation& act = {}) noexcept;
void bn_infer_bf16(const bf16* x, bf16* y, NcsShape shape, const BnInferParams<float>& p,
                   const Activation& act = {}) noexcept;

// The same arithmetic on rows of one image, in place and on the calling
// thread: row r (channel c0 + r) at y + r * ld, its first len elements,
// y = act(fma(y, scale_c, shift_c)), bit for bit what bn_infer_* gives on
// those elements; with p == nullptr, y = act(y) (activation.h's
// definition, as the standalone activation ops). For a Conv that applies
// the BatchNormalization and activation after it to each stretch of its
// output while the stretch is in cache.
void bn_infer_rows_f32(float* y, size_t ld, size_t c0, size_t rows, size_t len, const BnInferParams<float>* p,
                       const Activation& act) noexcept;
void bn_infer_rows_f64(double* y, size_t ld, size_t c0, size_t rows, size_t len, const BnInferParams<double>* p,
                       const Activation& act) noexcept;

void bn_infer_nonspatial_f32(const float* x, float* y, NcsShape shape,
                             const BnInferParams<float>& p, const Activation& act = {}) noexcept;
void bn_infer_nonspatial_f64(const double* x, double* y, NcsShape shape,
                             const BnInferParams<double>& p, const Activation& act = {}) noexcept;
void bn_infer_nonspatial_f16(const f16* x, f16* y, NcsShape shape, const BnInferParams<float>& p,
                             const Activation& act = {}) noexcept;
void bn_infer_nonspatial_bf16(const bf16* x, bf16* y, NcsShape shape,
                              const BnInferParams<float>& p, const Activation& act = {}) noexcept;

}  // namespace bnorm::kernels
