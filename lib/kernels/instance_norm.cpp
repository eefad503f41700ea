// InstanceNormalization (see instance_norm.h): per row, the moments, then
// the Centered mode of the normalization loops while the row is in cache.
// No FMA contraction in to_affine, whatever flags the library is built with.
#pragma GCC optimize("fp-contract=off")

#include "kernels/instance_norm.h"

#include <algorithm>
#include <type_traits>

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/moments.h"
#include "kernels/normalize.h"
#include "kernels/row_norm.h"

namespace bnorm::kernels {
namespace {

// The statistics of row r, kept when asked for (row_norm.h).
struct RowStats {
  double* mean;
  double* var;
  void keep(size_t r, const detail::Moments& m) const noexcept {
    if (mean == nullptr) return;
    mean[r] = m.mean();
    var[r] = m.variance();
  }
};

// Long rows, software-pipelined: row r is normalized while the moments of
// row r + 1 are taken, so that reading X (for the statistics) and writing
// Y overlap in memory. Float rows go through normalize_and_moments, one
// loop carrying both rows (taking turns a chunk at a time overlapped
// nothing: 0.5 of memcpy out of cache, against 0.63 for the single loop,
// docs/performance.md); the other types normalize a chunk of row r, then
// take the moments of the same chunk of row r + 1. Moments merge chunk by
// chunk in order, exactly as span_moments does, so every way gives the
// same bits.
template <class T, class C>
void long_rows(const T* x, T* y, size_t r0, size_t r1, NcsShape shape, const NormParams<C>& p,
               bool stream, RowStats stats) noexcept {
  const size_t S = shape.s;
  detail::Moments m = detail::span_moments(x + r0 * S, S, nullptr, 0, stream);
  for (size_t r = r0; r < r1; ++r) {
    const size_t c = r % shape.c;
    stats.keep(r, m);
    const detail::RowOp<C> op =
        detail::centered_op<C>(m.mean(), m.variance(), p.scale[c], p.bias[c], p.epsilon);
    const bool more = r + 1 < r1;
    if constexpr (std::is_same_v<T, float>) {  // one loop for both rows
      if (more) {
        const float* after = r + 2 < r1 ? x + (r + 2) * S : nullptr;
        m = detail::normalize_and_moments(x + r * S, y + r * S, op, stream, x + (r + 1) * S, S,
                                          after, after == nullptr ? 0 : S);
        continue;
      }
    }
    detail::Moments next;
    for (size_t begin = 0; begin < S; begin += detail::kMomentsChunk) {
      const size_t len = std::min(detail::kMomentsChunk, S - begin);
      detail::affine_rows(x + r * S + begin, y + r * S + begin, 1, len, &op, stream);
      if (more) {
        const T* piece = x + (r + 1) * S + begin;
        const size_t ahead = std::min(detail::kMomentsChunk, S - begin - len);
        next = detail::merge(next, detail::span_moments(piece, len, piece + len, ahead, stream));
      }
    }
    m = next;
  }
}

// Short rows: groups of rows of up to kSegmentElements elements; the
// moments of each row of a group, then the group normalized while it is
// still in cache.
template <class T, class C>
void short_rows(const T* x, T* y, size_t r0, size_t r1, NcsShape shape, const NormParams<C>& p,
                bool stream, RowStats stats) noexcept {
  const size_t S = shape.s;
  const size_t group = std::clamp<size_t>(detail::kSegmentElements / S, 1, detail::kMaxRowsPerTask);
  detail::RowOp<C> ops[detail::kMaxRowsPerTask];
  for (size_t g0 = r0; g0 < r1; g0 += group) {
    const size_t g1 = std::min(r1, g0 + group);
    for (size_t r = g0; r < g1; ++r) {
      const size_t c = r % shape.c;
      const detail::Moments m = detail::span_moments(x + r * S, S, nullptr, 0, stream);
      stats.keep(r, m);
      ops[r - g0] = detail::centered_op<C>(m.mean(), m.variance(), p.scale[c], p.bias[c], p.epsilon);
    }
    detail::affine_rows(x + g0 * S, y + g0 * S, g1 - g0, S, ops, stream);
  }
}

template <class T, class C>
void instance_norm(const T* x, T* y, NcsShape shape, const NormParams<C>& p,
                   RowStats stats = {nullptr, nullptr}) noexcept {
  const size_t total = shape.elements();
  if (total == 0) return;
  const bool stream = x != y && total * sizeof(T) >= streaming_threshold_bytes();
  const bool parallel = total >= detail::kParallelMinElements;
  const size_t S = shape.s;
  const size_t rows = shape.n * shape.c;
  const bool long_row = S >= detail::kMomentsChunk;
  const size_t tasks = detail::task_count(rows, rows, parallel);  // one per thread
  detail::for_tasks(tasks, parallel, stream, [&](size_t t) {
    const size_t r0 = detail::task_begin(t, tasks, rows);
    const size_t r1 = detail::task_begin(t + 1, tasks, rows);
    if (r0 == r1) return;
    if (long_row) {
      long_rows(x, y, r0, r1, shape, p, stream, stats);
    } else {
      short_rows(x, y, r0, r1, shape, p, stream, stats);
    }
  });
}

}  // namespace

void instance_norm_f32(const float* x, float* y, NcsShape shape,
                       const NormParams<float>& p) noexcept {
  instance_norm(x, y, shape, p);
}
void instance_norm_f64(const double* x, double* y, NcsShape shape,
                       const NormParams<double>& p) noexcept {
  instance_norm(x, y, shape, p);
}
void instance_norm_f16(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p) noexcept {
  instance_norm(x, y, shape, p);
}
void instance_norm_bf16(const bf16* x, bf16* y, NcsShape shape,
                        const NormParams<float>& p) noexcept {
  instance_norm(x, y, shape, p);
}

namespace detail {

void normalize_rows(const float* x, float* y, NcsShape shape, const NormParams<float>& p,
                    double* mean, double* var) noexcept {
  instance_norm(x, y, shape, p, {mean, var});
}
void normalize_rows(const double* x, double* y, NcsShape shape, const NormParams<double>& p,
                    double* mean, double* var) noexcept {
  instance_norm(x, y, shape, p, {mean, var});
}
void normalize_rows(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p,
                    double* mean, double* var) noexcept {
  instance_norm(x, y, shape, p, {mean, var});
}
void normalize_rows(const bf16* x, bf16* y, NcsShape shape, const NormParams<float>& p,
                    double* mean, double* var) noexcept {
  instance_norm(x, y, shape, p, {mean, var});
}

}  // namespace detail
}  // namespace bnorm::kernels
