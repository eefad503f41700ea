// The normalizations of the family that reduce along strided axes, scalar
// float64 code (every storage type decoded exactly, each output rounded
// once to the storage type):
//
//   lp_normalize   LpNormalization on x seen as [outer, len, inner], along
//                  the middle axis: y = x / norm, norm = sum |x| (p = 1) or
//                  sqrt(sum x^2) (p = 2); y = 0 where norm = 0. A float64
//                  sum of squares that overflows (double data) is taken
//                  again scaled by the largest |x|.
//   lrn            LRN on [N, C, S] data: sq = sum of x[n, i, s]^2 over
//                  max(0, c - floor((size-1)/2)) <= i <= min(C-1, c + ceil((size-1)/2)),
//                  y = x / (bias + alpha / size * sq)^beta. y must not overlap x.
//   mean_variance_normalize
//                  MeanVarianceNormalization: mean and population variance
//                  over the axes marked `reduced` (two passes: the mean, then
//                  the squared deviations from it), y = (x - mean) /
//                  (sqrt(var) + epsilon), or x - mean without
//                  normalize_variance. `work` holds 2 * G doubles, G the
//                  product of the kept dims; rank <= kMaxMvnRank (collapse
//                  neighbouring axes of the same kind first). y == x allowed.
//
// Explicitly instantiated for float, double, f16 and bf16.
#pragma once

#include <cstddef>

#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::kernels {

template <class T>
void lp_normalize(const T* x, T* y, size_t outer, size_t len, size_t inner, int p) noexcept;

struct LrnParams {
  size_t size;  // >= 1
  double alpha;
  double beta;
  double bias;
};

template <class T>
void lrn(const T* x, T* y, NcsShape shape, const LrnParams& p) noexcept;

constexpr size_t kMaxMvnRank = 32;

struct MvnParams {
  bool normalize_variance;
  double epsilon;  // added to the standard deviation
};

template <class T>
void mean_variance_normalize(const T* x, T* y, const size_t* dims, const bool* reduced, size_t rank,
                             const MvnParams& p, double* work) noexcept;

}  // namespace bnorm::kernels
