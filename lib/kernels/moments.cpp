// Chunked moments (see moments.h), instantiated per SIMD level, alone
// (span_moments) or with another row normalized inside the same loops
// (normalize_and_moments). Float data (f32, and f16/bf16 decoded to float)
// take one shifted pass per chunk, float64 data the two-pass formula.
// Squares are added with fma() and nothing else is contracted, so every
// level rounds the same operations.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/moments.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {
namespace {

constexpr size_t kLanes = 32;

// The lanes added pairwise in a fixed order.
inline double add_lanes(double* lane) noexcept {
  for (size_t width = kLanes / 2; width > 0; width /= 2) {
    for (size_t k = 0; k < width; ++k) lane[k] += lane[k + width];
  }
  return lane[0];
}

// Prefetches bytes [begin, end) of p over `steps` calls of step(), a few
// lines each, so that memory keeps streaming the next chunk while a pass
// works on this one from L1 (the prefetches wait when too many are in
// flight). Into L2 (T1), not L1: T1 measured about 10% faster out of cache
// on an AMD EPYC (Zen 4) core (docs/performance.md, 2026-11-23); the next
// chunk moves from L2 to L1 on its first pass. Only where
// chunk_prefetch_active() (isa.h): on AMD Zen 4 the loops ran faster
// without it, in and out of cache.
class Prefetcher {
 public:
  Prefetcher(const char* p, size_t begin, size_t end, size_t steps) noexcept
      : next_(p + begin), end_(p + end),
        lines_per_step_((end - begin + 64 * steps - 1) / (64 * steps)) {}

  void step() noexcept {
    for (size_t k = 0; k < lines_per_step_ && next_ < end_; ++k, next_ += 64) {
      simd::prefetch<2>(next_);
    }
  }

 private:
  const char* next_;
  const char* end_;
  size_t lines_per_step_;
};

// Lane sums of one pass: lane l holds elements l, l + kLanes, ... in order.
template <class D>
struct LaneAcc {
  static constexpr size_t kVecs = kLanes / simd::lanes<D>();
  D v[kVecs];
  LaneAcc() noexcept {
    for (auto& a : v) a = simd::splat<D>(0.0);
  }
  void to(double* lane) const noexcept { std::memcpy(lane, v, sizeof v); }
};

// The sum of x[0, n) over the lanes (float64 data: the first pass of the
// two-pass formula).
template <class I, class Row>
inline double lane_sum(const double* x, size_t n, Prefetcher prefetch, Row& row) noexcept {
  using D = typename I::D;
  constexpr size_t kD = simd::lanes<D>();
  LaneAcc<D> acc;
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    prefetch.step();
    row.step();
    for (size_t v = 0; v < acc.kVecs; ++v) acc.v[v] += I::load(x + i + v * kD);
  }
  double lane[kLanes];
  acc.to(lane);
  for (; i < n; ++i) lane[i % kLanes] += x[i];
  return add_lanes(lane);
}

// The sum of (x - mean)^2 over x[0, n), over the lanes (float64 data: the
// second pass).
template <class I, class Row>
inline double lane_squares(const double* x, size_t n, double mean, Prefetcher prefetch,
                           Row& row) noexcept {
  using D = typename I::D;
  constexpr size_t kD = simd::lanes<D>();
  const D m = simd::splat<D>(mean);
  LaneAcc<D> acc;
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    prefetch.step();
    row.step();
    for (size_t v = 0; v < acc.kVecs; ++v) {
      const D e = I::load(x + i + v * kD) - m;
      acc.v[v] = I::fma(e, e, acc.v[v]);
    }
  }
  double lane[kLanes];
  acc.to(lane);
  for (; i < n; ++i) lane[i % kLanes] = std::fma(x[i] - mean, x[i] - mean, lane[i % kLanes]);
  return add_lanes(lane);
}

// The shift of a chunk of float data: the float64 mean of its first block
// (added pairwise, the same at every level), or 0 when that is not finite
// (an infinity there must still give an infinite mean, not inf - inf).
inline double chunk_shift(const float* x, size_t n) noexcept {
  const size_t m = std::min(n, kLanes);
  double lane[kLanes] = {};
  for (size_t i = 0; i < m; ++i) lane[i] = x[i];
  const double k = add_lanes(lane) / static_cast<double>(m);
  return std::isfinite(k) ? k : 0.0;
}

// Moments of a chunk of float data in one pass, shifted by k:
//   e = x - k (in float64);  S1 = sum e;  S2 = sum e^2 (each added by fma)
//   sum = k * n + S1;  M2 = S2 - S1 * (S1 / n)   (clamped at 0; NaN stays)
// k is the mean of the chunk's first kLanes elements, so
//   (mean - k)^2 <= (1 / kLanes) * sum over that block of (x - mean)^2
//               <= (n / kLanes) * variance,
// and the cancellation in M2 costs at most log2(kMomentsChunk / kLanes) = 6
// of float64's 53 bits: 47 bits for data of 24 (docs/semantics.md). One
// pass instead of two measured 1.2x (Intel Xeon, AVX-512) to 1.35x (AMD
// Zen 4) the speed of the two-pass formula (docs/performance.md).
template <class I, class Row>
inline Moments shifted_moments(const float* x, size_t n, Prefetcher prefetch, Row& row) noexcept {
  using D = typename I::D;
  constexpr size_t kD = simd::lanes<D>();
  const double shift = chunk_shift(x, n);
  const D k = simd::splat<D>(shift);
  LaneAcc<D> s1;
  LaneAcc<D> s2;
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    prefetch.step();
    row.step();
    for (size_t v = 0; v < s1.kVecs; ++v) {
      const D e = I::load_wide(x + i + v * kD) - k;
      s1.v[v] += e;
      s2.v[v] = I::fma(e, e, s2.v[v]);
    }
  }
  double lane1[kLanes];
  double lane2[kLanes];
  s1.to(lane1);
  s2.to(lane2);
  for (; i < n; ++i) {
    const double e = static_cast<double>(x[i]) - shift;
    lane1[i % kLanes] += e;
    lane2[i % kLanes] = std::fma(e, e, lane2[i % kLanes]);
  }
  const double count = static_cast<double>(n);
  const double sum1 = add_lanes(lane1);
  const double m2 = add_lanes(lane2) - sum1 * (sum1 / count);
  return {count, shift * count + sum1, m2 < 0 ? 0.0 : m2};
}

// Moments of one chunk; the `ahead_bytes` at `ahead` (what comes next) are
// prefetched during the pass(es), and row.step() runs once per block of
// kLanes elements of each pass.
template <class I, class T, class Row>
inline Moments chunk_moments(const T* x, size_t n, const char* ahead, size_t ahead_bytes,
                             Row& row) noexcept {
  const size_t blocks = std::max<size_t>(1, n / kLanes);
  if constexpr (std::is_same_v<T, double>) {  // two passes: no loss at all
    const Prefetcher first(ahead, 0, ahead_bytes / 2, blocks);
    const Prefetcher second(ahead, ahead_bytes / 2, ahead_bytes, blocks);
    const double count = static_cast<double>(n);
    const double sum = lane_sum<I>(x, n, first, row);
    return {count, sum, lane_squares<I>(x, n, sum / count, second, row)};
  } else {
    return shifted_moments<I>(x, n, Prefetcher(ahead, 0, ahead_bytes, blocks), row);
  }
}

// Whether the loops prefetch the next chunk (isa.h's chunk_prefetch_active(),
// and chunk_prefetch_out_of_cache_active() for data beyond the streaming
// threshold).
inline bool chunk_prefetch(bool out_of_cache) noexcept {
  return chunk_prefetch_active() || (out_of_cache && chunk_prefetch_out_of_cache_active());
}

// No row rides along (span_moments).
struct NoRow {
  void step() noexcept {}
};

// normalize_and_moments' other row: y = fma(x - m, a, b) over n floats,
// kStep elements per step() (after a head that aligns y for non-temporal
// stores), the rest in finish(). Each element is rounded as the Centered
// mode of affine_rows rounds it (a subtraction, then fma(d, a, b)), so the
// result is the same bits.
template <class I, bool kStream>
class CenteredRow {
 public:
  static constexpr size_t kStep = kLanes;  // one pass over each chunk of the other row

  // kStream: y is written with non-temporal stores, after a scalar head up
  // to its first aligned vector (the caller checked that y is
  // element-aligned: can_stream() below).
  CenteredRow(const float* x, float* y, size_t n, const RowOp<float>& op) noexcept
      : x_(x), y_(y), n_(n), sm_(op.m), sa_(op.a), sb_(op.b),
        m_(simd::splat<F>(op.m)), a_(simd::splat<F>(op.a)), b_(simd::splat<F>(op.b)) {
    if constexpr (kStream) scalar(std::min(simd::elements_to_alignment(y, kF), n));
  }

  void step() noexcept {
    if (i_ + kStep > n_) return;
    for (size_t v = 0; v < kStep / kF; ++v) vector(i_ + v * kF);
    i_ += kStep;
  }

  void finish() noexcept {
    for (; i_ + kF <= n_; i_ += kF) vector(i_);
    scalar(n_ - i_);
  }

  // Whether y can be streamed: element-aligned (else stores stay cached).
  static bool can_stream(const float* y) noexcept {
    return simd::elements_to_alignment(y, kF) != SIZE_MAX;
  }

 private:
  using F = typename I::F;
  static constexpr size_t kF = simd::lanes<F>();
  static_assert(kStep % kF == 0);

  void vector(size_t i) noexcept {
    const F r = I::fma(I::load(x_ + i) - m_, a_, b_);
    if constexpr (kStream) {
      I::stream(y_ + i, r);
    } else {
      I::store(y_ + i, r);
    }
  }
  void scalar(size_t count) noexcept {
    for (const size_t end = i_ + count; i_ < end; ++i_) y_[i_] = std::fma(x_[i_] - sm_, sa_, sb_);
  }

  const float* x_;
  float* y_;
  size_t n_;
  size_t i_ = 0;
  float sm_, sa_, sb_;
  F m_, a_, b_;
};

template <class I, class T, class Row = NoRow>
inline Moments moments_body(const T* x, size_t n, const T* next_span, size_t next_n, bool prefetch,
                            Row&& row = Row{}) noexcept {
  Moments total;
  for (size_t begin = 0; begin < n; begin += kMomentsChunk) {
    const size_t count = std::min(kMomentsChunk, n - begin);
    const bool last = begin + count == n;
    const T* next = last ? next_span : x + begin + count;
    const size_t ahead = next == nullptr || !prefetch
                             ? 0
                             : std::min(kMomentsChunk, last ? next_n : n - begin - count);
    const char* ahead_bytes = reinterpret_cast<const char*>(next);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      total = merge(total, chunk_moments<I>(x + begin, count, ahead_bytes, ahead * sizeof(T), row));
    } else {
      float decoded[kMomentsChunk];
      using V = VecOf<I, T>;
      map_span<I>(x + begin, decoded, count, false, [](const V& v, size_t, size_t) { return v; });
      total = merge(total, chunk_moments<I>(decoded, count, ahead_bytes, ahead * sizeof(T), row));
    }
  }
  return total;
}

template <class T>
BNORM_ENTRY_GENERIC Moments moments_generic(const T* x, size_t n, const T* next, size_t next_n,
                                            bool prefetch) {
  return moments_body<simd::Generic>(x, n, next, next_n, prefetch);
}
template <class T>
BNORM_ENTRY_AVX2 Moments moments_avx2(const T* x, size_t n, const T* next, size_t next_n,
                                      bool prefetch) {
  return moments_body<simd::Avx2>(x, n, next, next_n, prefetch);
}
template <class T>
BNORM_ENTRY_AVX512 Moments moments_avx512(const T* x, size_t n, const T* next, size_t next_n,
                                          bool prefetch) {
  return moments_body<simd::Avx512>(x, n, next, next_n, prefetch);
}

// normalize_and_moments at each level, streaming y or not (a loop each).
template <class I, bool kStream>
inline Moments normalize_and_moments_body(const float* x, float* y, const RowOp<float>& op,
                                          const float* next, size_t n, const float* after,
                                          size_t after_n, bool prefetch) noexcept {
  CenteredRow<I, kStream> row(x, y, n, op);
  const Moments m = moments_body<I>(next, n, after, after_n, prefetch, row);
  row.finish();
  return m;
}
#define BNORM_NORMALIZE_AND_MOMENTS(level, ENTRY, I)                                             \
  ENTRY Moments normalize_and_moments_##level(const float* x, float* y, const RowOp<float>& op, \
                                              bool stream, const float* next, size_t n,        \
                                              const float* after, size_t after_n) {            \
    return stream && CenteredRow<I, true>::can_stream(y)                                       \
               ? normalize_and_moments_body<I, true>(x, y, op, next, n, after, after_n,        \
                                                     chunk_prefetch(stream))                   \
               : normalize_and_moments_body<I, false>(x, y, op, next, n, after, after_n,       \
                                                      chunk_prefetch(stream));                 \
  }
BNORM_NORMALIZE_AND_MOMENTS(generic, BNORM_ENTRY_GENERIC, simd::Generic)
BNORM_NORMALIZE_AND_MOMENTS(avx2, BNORM_ENTRY_AVX2, simd::Avx2)
BNORM_NORMALIZE_AND_MOMENTS(avx512, BNORM_ENTRY_AVX512, simd::Avx512)
#undef BNORM_NORMALIZE_AND_MOMENTS

template <class T>
Moments dispatch(const T* x, size_t n, const T* next, size_t next_n, bool out_of_cache) noexcept {
  const bool prefetch = chunk_prefetch(out_of_cache);
  switch (std::is_same_v<T, f16> ? f16_isa() : active_isa()) {
    case Isa::Avx512: return moments_avx512(x, n, next, next_n, prefetch);
    case Isa::Avx2: return moments_avx2(x, n, next, next_n, prefetch);
    case Isa::Generic: return moments_generic(x, n, next, next_n, prefetch);
  }
  return {};
}

}  // namespace

Moments span_moments(const float* x, size_t n, const float* next, size_t next_n,
                     bool out_of_cache) noexcept {
  return dispatch(x, n, next, next_n, out_of_cache);
}
Moments span_moments(const double* x, size_t n, const double* next, size_t next_n,
                     bool out_of_cache) noexcept {
  return dispatch(x, n, next, next_n, out_of_cache);
}
Moments span_moments(const f16* x, size_t n, const f16* next, size_t next_n,
                     bool out_of_cache) noexcept {
  return dispatch(x, n, next, next_n, out_of_cache);
}
Moments span_moments(const bf16* x, size_t n, const bf16* next, size_t next_n,
                     bool out_of_cache) noexcept {
  return dispatch(x, n, next, next_n, out_of_cache);
}

Moments normalize_and_moments(const float* x, float* y, const RowOp<float>& op, bool stream,
                              const float* next, size_t n, const float* after,
                              size_t after_n) noexcept {
  if (n == 0) return {};
  switch (active_isa()) {
    case Isa::Avx512:
      return normalize_and_moments_avx512(x, y, op, stream, next, n, after, after_n);
    case Isa::Avx2: return normalize_and_moments_avx2(x, y, op, stream, next, n, after, after_n);
    case Isa::Generic:
      return normalize_and_moments_generic(x, y, op, stream, next, n, after, after_n);
  }
  return {};
}

}  // namespace bnorm::kernels::detail
