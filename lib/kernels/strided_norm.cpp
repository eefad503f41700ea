// LpNormalization, LRN and MeanVarianceNormalization (see strided_norm.h).
// Reductions along a strided axis run over blocks of kBlock neighbouring
// positions of the inner axes, so that every pass reads whole cache lines.
#pragma GCC optimize("fp-contract=off")

#include "kernels/strided_norm.h"

#include <algorithm>
#include <cmath>

#include "kernels/norm_common.h"

namespace bnorm::kernels {
namespace {

using detail::decode;
using detail::encode;

constexpr size_t kBlock = 256;

// sqrt(sum x^2) along the axis at `x` (stride `inner`), scaled by the
// largest |x| so that it does not overflow (used when the plain sum did).
template <class T>
double scaled_norm2(const T* x, size_t len, size_t inner) noexcept {
  double top = 0;
  for (size_t a = 0; a < len; ++a) top = std::max(top, std::fabs(decode(x[a * inner])));
  if (top == 0 || !std::isfinite(top)) return top;
  double sum = 0;
  for (size_t a = 0; a < len; ++a) {
    const double v = decode(x[a * inner]) / top;
    sum += v * v;
  }
  return top * std::sqrt(sum);
}

template <class T>
void lp_block(const T* x, T* y, size_t len, size_t inner, size_t count, int p) noexcept {
  double norm[kBlock] = {};
  for (size_t a = 0; a < len; ++a) {
    const T* xa = x + a * inner;
    for (size_t k = 0; k < count; ++k) {
      const double v = decode(xa[k]);
      norm[k] += p == 1 ? std::fabs(v) : v * v;
    }
  }
  for (size_t k = 0; k < count; ++k) {
    if (p == 1) continue;
    norm[k] = std::isinf(norm[k]) ? scaled_norm2(x + k, len, inner) : std::sqrt(norm[k]);
  }
  for (size_t a = 0; a < len; ++a) {
    for (size_t k = 0; k < count; ++k) {
      const size_t i = a * inner + k;
      y[i] = encode<T>(norm[k] == 0 ? 0.0 : decode(x[i]) / norm[k]);
    }
  }
}

// Walks the elements of a [dims] tensor in order, calling fn(i, g) with g
// the element's index among the kept (not reduced) axes.
template <class Fn>
void for_each_group_index(const size_t* dims, const bool* reduced, size_t rank, size_t total,
                          const Fn& fn) noexcept {
  size_t gstride[kMaxMvnRank];
  size_t idx[kMaxMvnRank] = {};
  size_t s = 1;
  for (size_t d = rank; d-- > 0;) {
    gstride[d] = reduced[d] ? 0 : s;
    if (!reduced[d]) s *= dims[d];
  }
  size_t g = 0;
  for (size_t i = 0; i < total; ++i) {
    fn(i, g);
    for (size_t d = rank; d-- > 0;) {
      g += gstride[d];
      if (++idx[d] < dims[d]) break;
      g -= gstride[d] * dims[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

template <class T>
void lp_normalize(const T* x, T* y, size_t outer, size_t len, size_t inner, int p) noexcept {
  const size_t blocks = (inner + kBlock - 1) / kBlock;
  detail::for_row_ranges(outer * blocks, outer * len * inner, false, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const size_t o = r / blocks;
      const size_t k0 = (r % blocks) * kBlock;
      const size_t at = o * len * inner + k0;
      lp_block(x + at, y + at, len, inner, std::min(kBlock, inner - k0), p);
    }
  });
}

template <class T>
void lrn(const T* x, T* y, NcsShape shape, const LrnParams& p) noexcept {
  const size_t C = shape.c;
  const size_t S = shape.s;
  const size_t below = (p.size - 1) / 2;
  const size_t above = p.size / 2;  // ceil((size - 1) / 2)
  const double rate = p.alpha / static_cast<double>(p.size);
  const size_t blocks = (S + kBlock - 1) / kBlock;
  detail::for_row_ranges(shape.n * C * blocks, shape.elements(), false, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const size_t row = r / blocks;  // (n, c)
      const size_t n = row / C;
      const size_t c = row % C;
      const size_t s0 = (r % blocks) * kBlock;
      const size_t count = std::min(kBlock, S - s0);
      const size_t lo = c >= below ? c - below : 0;
      const size_t hi = std::min(C - 1, c + above);
      double sq[kBlock] = {};
      for (size_t i = lo; i <= hi; ++i) {
        const T* xi = x + (n * C + i) * S + s0;
        for (size_t k = 0; k < count; ++k) {
          const double v = decode(xi[k]);
          sq[k] += v * v;
        }
      }
      const size_t at = row * S + s0;
      for (size_t k = 0; k < count; ++k) {
        y[at + k] = encode<T>(decode(x[at + k]) / std::pow(p.bias + rate * sq[k], p.beta));
      }
    }
  });
}

template <class T>
void mean_variance_normalize(const T* x, T* y, const size_t* dims, const bool* reduced, size_t rank,
                             const MvnParams& p, double* work) noexcept {
  if (rank > kMaxMvnRank) return;
  size_t total = 1;
  size_t groups = 1;
  for (size_t d = 0; d < rank; ++d) {
    total *= dims[d];
    if (!reduced[d]) groups *= dims[d];
  }
  if (total == 0) return;
  const double count = static_cast<double>(total / groups);
  double* mean = work;
  double* m2 = work + groups;
  std::fill(work, work + 2 * groups, 0.0);
  for_each_group_index(dims, reduced, rank, total, [&](size_t i, size_t g) { mean[g] += decode(x[i]); });
  for (size_t g = 0; g < groups; ++g) mean[g] /= count;
  for_each_group_index(dims, reduced, rank, total, [&](size_t i, size_t g) {
    const double d = decode(x[i]) - mean[g];
    m2[g] += d * d;
  });
  for (size_t g = 0; g < groups; ++g) m2[g] = std::sqrt(m2[g] / count) + p.epsilon;  // the divisor
  for_each_group_index(dims, reduced, rank, total, [&](size_t i, size_t g) {
    const double d = decode(x[i]) - mean[g];
    y[i] = encode<T>(p.normalize_variance ? d / m2[g] : d);
  });
}

#define BNORM_STRIDED_NORM(T)                                                                   \
  template void lp_normalize<T>(const T*, T*, size_t, size_t, size_t, int) noexcept;          \
  template void lrn<T>(const T*, T*, NcsShape, const LrnParams&) noexcept;                     \
  template void mean_variance_normalize<T>(const T*, T*, const size_t*, const bool*, size_t, \
                                           const MvnParams&, double*) noexcept;
BNORM_STRIDED_NORM(float)
BNORM_STRIDED_NORM(double)
BNORM_STRIDED_NORM(f16)
BNORM_STRIDED_NORM(bf16)

}  // namespace bnorm::kernels
