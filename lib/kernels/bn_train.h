// BatchNormalization in training mode on [N, C, S] data (layout.h):
//
//   mean[c] = sum over n, s of x[n, c, s] / (N * S)
//   var[c]  = sum over n, s of (x[n, c, s] - mean[c])^2 / (N * S)   (population)
//   y[n, c, s] = (x[n, c, s] - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]
//
// Statistics: accumulated in double for every data type (moments.h:
// two-pass per L1-sized chunk, chunks merged with Chan et al.'s update, so
// X is read once). The work is cut into pieces fixed by the shape alone,
// so the statistics are bitwise the same for any thread count and SIMD
// level. They are returned in double; the caller rounds them to T2.
//
// Normalization: a second pass over X through the same loops as inference
// BN, as fma(x - m, a, b) with m = mean rounded to the compute type and
// a, b = to_affine(scale, bias, mean - m, var, epsilon) in double, rounded
// to the compute type (float for f32/f16/bf16, double for f64). Taking m
// off first keeps x - mean exact when |mean| >> sqrt(var). f16/bf16
// results are rounded once.
//
// The legacy spatial = 0 form (statistics per (c, s) over N only) is the
// same call on the shape {N, C * S, 1} with parameter arrays of C * S.
//
// Preconditions: mean and var have C elements; y == x allowed, otherwise no
// overlap. NaN and infinities follow IEEE (an infinite x gives an infinite
// mean and a NaN variance for its channel).
#pragma once

#include <cstddef>

#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::kernels {

void bn_batch_stats_f32(const float* x, NcsShape shape, double* mean, double* var) noexcept;
void bn_batch_stats_f64(const double* x, NcsShape shape, double* mean, double* var) noexcept;
void bn_batch_stats_f16(const f16* x, NcsShape shape, double* mean, double* var) noexcept;
void bn_batch_stats_bf16(const bf16* x, NcsShape shape, double* mean, double* var) noexcept;

// The statistics into mean and var, then y normalized with them.
void bn_train_f32(const float* x, float* y, NcsShape shape, const NormParams<float>& p,
                  double* mean, double* var) noexcept;
void bn_train_f64(const double* x, double* y, NcsShape shape, const NormParams<double>& p,
                  double* mean, double* var) noexcept;
void bn_train_f16(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p,
                  double* mean, double* var) noexcept;
void bn_train_bf16(const bf16* x, bf16* y, NcsShape shape, const NormParams<float>& p,
                   double* mean, double* var) noexcept;

// The running statistics of ONNX training mode, for c elements:
//   out = input * momentum + current * (1 - momentum)
// in double (the caller rounds to T2 once). out may alias either input.
void bn_running_update(const double* input, const double* current, double* out, size_t c,
                       double momentum) noexcept;

}  // namespace bnorm::kernels
