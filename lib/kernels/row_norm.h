// Rows normalized with their own statistics (internal: for
// lib/kernels/*.cpp). Every row of S elements of [N, C, S] data (row r has
// channel r % C) is normalized as InstanceNormalization does
// (instance_norm.h); when mean and var are not null they receive each row's
// mean and population variance in double (N * C of each).
//
// InstanceNormalization is this with null statistics. BN training on data
// whose channels are each one row (N = 1) is this too, with the statistics
// kept: span_moments over a row is the channel's moments bit for bit
// (bn_train.cpp), and the rows then take one pass over memory instead of
// two (the moments of row r + 1 ride along the normalization of row r).
#pragma once

#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::kernels::detail {

void normalize_rows(const float* x, float* y, NcsShape shape, const NormParams<float>& p,
                    double* mean, double* var) noexcept;
void normalize_rows(const double* x, double* y, NcsShape shape, const NormParams<double>& p,
                    double* mean, double* var) noexcept;
void normalize_rows(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p,
                    double* mean, double* var) noexcept;
void normalize_rows(const bf16* x, bf16* y, NcsShape shape, const NormParams<float>& p,
                    double* mean, double* var) noexcept;

}  // namespace bnorm::kernels::detail
