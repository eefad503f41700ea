// GroupNormalization on [N, C, S] data (layout.h) with G groups of C / G
// consecutive channels:
//
//   mean[n, g] = mean of x[n, c, s] over the channels c of group g and all s
//   var[n, g]  = population variance over the same elements
//   y[n, c, s] = scale[c] * (x[n, c, s] - mean[n, g]) / sqrt(var[n, g] + epsilon) + bias[c]
//
// The arithmetic of InstanceNormalization (instance_norm.h), with a group in
// place of a channel: statistics in double (moments.h), then each channel
// normalized by the Centered loop of affine_rows.h, fma(x - m, a, b) in
// the compute type (float for f32/f16/bf16, double for f64), rounded once
// to the storage type. With G = C the result is InstanceNormalization's,
// bit for bit. scale and bias have C elements (GroupNormalization-18's
// per-group parameters are expanded by the caller).
//
// Preconditions: G >= 1 and C % G == 0; y == x allowed, otherwise no
// overlap. Groups are spread over the OpenMP threads.
#pragma once

#include <cstddef>

#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::kernels {

void group_norm_f32(const float* x, float* y, NcsShape shape, size_t groups,
                    const NormParams<float>& p) noexcept;
void group_norm_f64(const double* x, double* y, NcsShape shape, size_t groups,
                    const NormParams<double>& p) noexcept;
void group_norm_f16(const f16* x, f16* y, NcsShape shape, size_t groups,
                    const NormParams<float>& p) noexcept;
void group_norm_bf16(const bf16* x, bf16* y, NcsShape shape, size_t groups,
                     const NormParams<float>& p) noexcept;

}  // namespace bnorm::kernels
