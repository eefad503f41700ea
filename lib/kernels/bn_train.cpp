// Training-mode BatchNormalization (see bn_train.h): per-channel moments in
// pieces fixed by the shape, then the Centered mode of the normalization
// loops.
// No FMA contraction in to_affine, whatever flags the library is built with.
#pragma GCC optimize("fp-contract=off")

#include "kernels/bn_train.h"

#include <algorithm>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/moments.h"
#include "kernels/normalize.h"
#include "kernels/row_norm.h"

namespace bnorm::kernels {
namespace {

using detail::Moments;

// Each channel's N * S elements are cut into units: row segments of up to
// kSegmentElements when rows are long, else groups of whole rows gathered
// into one chunk. Units are merged in order into at most kPieces pieces per
// channel, the pieces in order into the channel's moments. The cut depends
// on the shape only, never on the threads.
constexpr size_t kPieces = 16;
// Pieces computed per parallel round (their moments live on the stack).
constexpr size_t kPiecesPerRound = 256;

struct Units {
  bool long_rows;
  size_t segments;       // per row, long rows
  size_t rows_per_unit;  // short rows
  size_t count;          // per channel
};

Units units_of(NcsShape shape) noexcept {
  if (shape.s >= detail::kMomentsChunk) {
    const size_t segments = (shape.s + detail::kSegmentElements - 1) / detail::kSegmentElements;
    return {true, segments, 1, shape.n * segments};
  }
  const size_t rows = detail::kMomentsChunk / shape.s;
  return {false, 1, rows, (shape.n + rows - 1) / rows};
}

// Unit u of channel c when rows are long: a row segment.
template <class T>
const T* long_unit(const T* x, NcsShape shape, size_t c, size_t u, const Units& units,
                   size_t* len) noexcept {
  const size_t begin = (u % units.segments) * detail::kSegmentElements;
  *len = std::min(detail::kSegmentElements, shape.s - begin);
  return x + ((u / units.segments) * shape.c + c) * shape.s + begin;
}

// The moments of unit u of channel c; `more`: unit u + 1 comes next (its
// start is prefetched meanwhile).
template <class T>
Moments unit_moments(const T* x, NcsShape shape, size_t c, size_t u, const Units& units,
                     bool more) noexcept {
  const size_t S = shape.s;
  if (units.long_rows) {
    size_t len = 0;
    size_t next_len = 0;
    const T* span = long_unit(x, shape, c, u, units, &len);
    const T* next = more ? long_unit(x, shape, c, u + 1, units, &next_len) : nullptr;
    return detail::span_moments(span, len, next, next_len);
  }
  T gathered[detail::kMomentsChunk];
  size_t len = 0;
  const size_t n0 = u * units.rows_per_unit;
  const size_t n1 = std::min(shape.n, n0 + units.rows_per_unit);
  for (size_t n = n0; n < n1; ++n, len += S) {
    std::copy_n(x + (n * shape.c + c) * S, S, gathered + len);
  }
  return detail::span_moments(gathered, len);
}

template <class T>
void batch_stats(const T* x, NcsShape shape, double* mean, double* var) noexcept {
  if (shape.c == 0) return;
  if (shape.n == 0 || shape.s == 0) {
    std::fill_n(mean, shape.c, std::numeric_limits<double>::quiet_NaN());
    std::fill_n(var, shape.c, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const Units units = units_of(shape);
  const size_t pieces = std::min(kPieces, units.count);
  const size_t channels_per_round = std::max<size_t>(1, kPiecesPerRound / pieces);
  const bool parallel = shape.elements() >= detail::kParallelMinElements;
  Moments piece[kPiecesPerRound];
  for (size_t c0 = 0; c0 < shape.c; c0 += channels_per_round) {
    const size_t c1 = std::min(shape.c, c0 + channels_per_round);
    detail::for_tasks((c1 - c0) * pieces, parallel, false, [&](size_t t) {
      const size_t c = c0 + t / pieces;
      const size_t p = t % pieces;
      Moments m;
      const size_t end = (p + 1) * units.count / pieces;
      for (size_t u = p * units.count / pieces; u < end; ++u) {
        m = detail::merge(m, unit_moments(x, shape, c, u, units, u + 1 < end));
      }
      piece[t] = m;
    });
    for (size_t c = c0; c < c1; ++c) {
      Moments m;
      for (size_t p = 0; p < pieces; ++p) m = detail::merge(m, piece[(c - c0) * pieces + p]);
      mean[c] = m.mean();
      var[c] = m.variance();
    }
  }
}

template <class T, class C>
void train(const T* x, T* y, NcsShape shape, const NormParams<C>& p, double* mean,
           double* var) noexcept {
  // Each channel one row that is a single unit (units_of): its moments are
  // span_moments of the row, as InstanceNormalization takes them, so its
  // loops give the same bits in one pass over memory (row_norm.h).
  if (shape.n == 1 && shape.s > 0 && shape.s <= detail::kSegmentElements) {
    detail::normalize_rows(x, y, shape, p, mean, var);
    return;
  }
  batch_stats(x, shape, mean, var);
  detail::normalize_channels<T, C>(x, y, shape, [&](size_t c) {
    return detail::centered_op<C>(mean[c], var[c], p.scale[c], p.bias[c], p.epsilon);
  });
}

}  // namespace

void bn_batch_stats_f32(const float* x, NcsShape shape, double* mean, double* var) noexcept {
  batch_stats(x, shape, mean, var);
}
void bn_batch_stats_f64(const double* x, NcsShape shape, double* mean, double* var) noexcept {
  batch_stats(x, shape, mean, var);
}
void bn_batch_stats_f16(const f16* x, NcsShape shape, double* mean, double* var) noexcept {
  batch_stats(x, shape, mean, var);
}
void bn_batch_stats_bf16(const bf16* x, NcsShape shape, double* mean, double* var) noexcept {
  batch_stats(x, shape, mean, var);
}

void bn_train_f32(const float* x, float* y, NcsShape shape, const NormParams<float>& p,
                  double* mean, double* var) noexcept {
  train(x, y, shape, p, mean, var);
}
void bn_train_f64(const double* x, double* y, NcsShape shape, const NormParams<double>& p,
                  double* mean, double* var) noexcept {
  train(x, y, shape, p, mean, var);
}
void bn_train_f16(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p,
                  double* mean, double* var) noexcept {
  train(x, y, shape, p, mean, var);
}
void bn_train_bf16(const bf16* x, bf16* y, NcsShape shape, const NormParams<float>& p,
                   double* mean, double* var) noexcept {
  train(x, y, shape, p, mean, var);
}

void bn_running_update(const double* input, const double* current, double* out, size_t c,
                       double momentum) noexcept {
  for (size_t i = 0; i < c; ++i) out[i] = input[i] * momentum + current[i] * (1 - momentum);
}

}  // namespace bnorm::kernels
