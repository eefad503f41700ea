// LayerNormalization and RMSNormalization rows (see layer_norm.h). The
// element loop is plain float64 code compiled once per SIMD level (the
// compiler vectorizes it; no contraction, so every level gives the same
// bits); the mean and variance come from moments.h, the RMS sum of squares
// from eight fixed partial sums.
#pragma GCC optimize("fp-contract=off")

#include "kernels/layer_norm.h"

#include <cmath>
#include <limits>

#include "kernels/isa.h"
#include "kernels/moments.h"
#include "kernels/norm_common.h"
#include "kernels/simd.h"

namespace bnorm::kernels {
namespace {

using detail::decode;
using detail::encode;

// Eight partial sums (element i in sum i % 8), added pairwise: a fixed
// order whatever the level.
template <class X>
inline double sum_squares(const X* x, size_t n) noexcept {
  double acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      const double v = decode(x[i + j]);
      acc[j] += v * v;
    }
  }
  for (; i < n; ++i) {
    const double v = decode(x[i]);
    acc[i % 8] += v * v;
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// y = (x - m) * inv * s + b, in float64, rounded once to Y.
template <class X, class Y>
inline void scale_row(const X* x, Y* y, size_t n, double m, double inv, const double* s,
                      const double* b) noexcept {
  if (b == nullptr) {
    for (size_t i = 0; i < n; ++i) y[i] = encode<Y>((decode(x[i]) - m) * inv * s[i]);
  } else {
    for (size_t i = 0; i < n; ++i) y[i] = encode<Y>((decode(x[i]) - m) * inv * s[i] + b[i]);
  }
}

template <class X, class Y>
inline void rows_body(const X* x, Y* y, size_t r0, size_t r1, size_t len, const RowNormParams& p,
                      double* mean, double* inv_std) noexcept {
  for (size_t r = r0; r < r1; ++r) {
    const X* xr = x + r * len;
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();  // statistics of an empty row
    double mu = p.rms ? 0 : nan;
    double var = nan;
    if (len > 0 && p.rms) {
      var = sum_squares(xr, len) / static_cast<double>(len);
    } else if (len > 0) {
      const detail::Moments m = detail::span_moments(xr, len);
      mu = m.mean();
      var = m.variance();
    }
    const double inv = 1.0 / std::sqrt(var + p.epsilon);
    if (mean != nullptr) mean[r] = mu;
    if (inv_std != nullptr) inv_std[r] = inv;
    const double* b = p.bias == nullptr ? nullptr : p.bias + r * p.bias_stride;
    scale_row(xr, y + r * len, len, mu, inv, p.scale + r * p.scale_stride, b);
  }
}

template <class X, class Y>
BNORM_ENTRY_GENERIC void rows_generic(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                      const RowNormParams& p, double* mean,
                                      double* inv_std) noexcept {
  rows_body(x, y, r0, r1, len, p, mean, inv_std);
}

template <class X, class Y>
BNORM_ENTRY_AVX2 void rows_avx2(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                const RowNormParams& p, double* mean, double* inv_std) noexcept {
  rows_body(x, y, r0, r1, len, p, mean, inv_std);
}

template <class X, class Y>
BNORM_ENTRY_AVX512 void rows_avx512(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                    const RowNormParams& p, double* mean,
                                    double* inv_std) noexcept {
  rows_body(x, y, r0, r1, len, p, mean, inv_std);
}

}  // namespace

template <class X, class Y>
void norm_rows(const X* x, Y* y, size_t rows, size_t len, const RowNormParams& p, double* mean,
               double* inv_std) noexcept {
  const Isa isa = active_isa();
  detail::for_row_ranges(rows, rows * len, false, [&](size_t r0, size_t r1) {
    switch (isa) {
      case Isa::Avx512: rows_avx512(x, y, r0, r1, len, p, mean, inv_std); break;
      case Isa::Avx2: rows_avx2(x, y, r0, r1, len, p, mean, inv_std); break;
      case Isa::Generic: rows_generic(x, y, r0, r1, len, p, mean, inv_std); break;
    }
  });
}

#define BNORM_NORM_ROWS(X, Y)                                                                  \
  template void norm_rows<X, Y>(const X*, Y*, size_t, size_t, const RowNormParams&, double*, \
                                double*) noexcept;
#define BNORM_NORM_ROWS_FROM(X) \
  BNORM_NORM_ROWS(X, float)     \
  BNORM_NORM_ROWS(X, double)    \
  BNORM_NORM_ROWS(X, f16)       \
  BNORM_NORM_ROWS(X, bf16)
BNORM_NORM_ROWS_FROM(float)
BNORM_NORM_ROWS_FROM(double)
BNORM_NORM_ROWS_FROM(f16)
BNORM_NORM_ROWS_FROM(bf16)

}  // namespace bnorm::kernels
