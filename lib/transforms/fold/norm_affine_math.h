// The normalization family's affine fold, once, for every user in bnorm (as
// kernels/affine.h is for BatchNormalization). LayerNormalization,
// RMSNormalization and GroupNormalization end with a per-feature affine
//   y[k] = n[k] * s[k] + b[k]            (n: the normalized input)
// and a linear consumer reads k as its input feature:
//   z[j] = sum_k y[k] W[k, j] + c[j]
// so
//   z[j] = sum_k n[k] W'[k, j] + c'[j],   W'[k, j] = s[k] W[k, j]   (W' = diag(s) W)
//                                         c'[j] = c[j] + sum_k b[k] W[k, j]   (c' = c + b·W)
// fold_affine_into_linear computes W' and the term b·W in float64 (the
// sum in k order); the caller adds c (scaled as its consumer needs: Gemm's
// alpha/beta) and rounds once to the stored types. W[k, j] is at
// w[k * k_stride + j * j_stride], which covers MatMul and Gemm (transB 0:
// strides N, 1; transB 1: 1, K) and a 1x1 Conv [O, C, 1...] (1, C).
// s and b hold K values, or one value for all k; b may be empty (absent).
#pragma once

#include <cstdint>
#include <vector>

namespace bnorm {

struct LinearFold {
  std::vector<double> weight;  // W', laid out as W
  std::vector<double> bias;    // b·W, N values (zeros when b is absent)
};

inline LinearFold fold_affine_into_linear(const std::vector<double>& s, const std::vector<double>& b,
                                          const std::vector<double>& w, int64_t K, int64_t N, int64_t k_stride,
                                          int64_t j_stride) {
  LinearFold out{w, std::vector<double>(static_cast<size_t>(N), 0.0)};
  for (int64_t k = 0; k < K; ++k) {
    const double sk = s.size() == 1 ? s[0] : s[k];
    const double bk = b.empty() ? 0.0 : (b.size() == 1 ? b[0] : b[k]);
    for (int64_t j = 0; j < N; ++j) {
      const int64_t at = k * k_stride + j * j_stride;
      out.bias[j] += bk * w[at];
      out.weight[at] = w[at] * sk;
    }
  }
  return out;
}

}  // namespace bnorm
