// InstanceNormalization on [N, C, S] data (layout.h):
//
//   mean[n, c] = sum over s of x[n, c, s] / S
//   var[n, c]  = sum over s of (x[n, c, s] - mean[n, c])^2 / S   (population)
//   y[n, c, s] = scale[c] * (x[n, c, s] - mean[n, c]) / sqrt(var[n, c] + epsilon) + B[c]
//
// Statistics in double (moments.h) for a group of rows of S elements, then
// the group is normalized while it is still in cache, as bn_train.h does:
// fma(x - m, a, b) with m = mean rounded to the compute type and a, b from
// to_affine in double. Compute type float for f32/f16/bf16 (f16/bf16 data
// decoded exactly, the result rounded once), double for f64. Parameters:
// C elements each. Rows are spread over the OpenMP threads.
//
// Preconditions: y == x allowed, otherwise no overlap. NaN and infinities
// follow IEEE; a constant row with epsilon = 0 gives NaN (0 / 0).
#pragma once

#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::kernels {

void instance_norm_f32(const float* x, float* y, NcsShape shape,
                       const NormParams<float>& p) noexcept;
void instance_norm_f64(const double* x, double* y, NcsShape shape,
                       const NormParams<double>& p) noexcept;
void instance_norm_f16(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p) noexcept;
void instance_norm_bf16(const bf16* x, bf16* y, NcsShape shape,
                        const NormParams<float>& p) noexcept;

}  // namespace bnorm::kernels
