// Mean and population variance of spans of data (internal: for
// lib/kernels/*.cpp), accumulated in double for every storage type.
//
// A span is cut into chunks of kMomentsChunk elements, and each chunk is
// read from memory once:
// - float data (f32, and f16/bf16 decoded to float): one pass summing
//   e = x - k and e^2 in float64, k the mean of the chunk's first 32
//   elements; M2 = sum e^2 - (sum e)^2 / n. That shift bounds the
//   cancellation to 6 of float64's 53 bits (moments.cpp), far beyond the
//   24 bits of the data;
// - float64 data: the two-pass formula (the sum, then the sum of squared
//   deviations from the chunk's mean, the chunk still in L1): no loss.
// Chunks and spans are merged with Chan et al.'s update
//   M2 = M2a + M2b + (mean_b - mean_a)^2 * na * nb / (na + nb)
// while the next chunk (or the start of the next span) is prefetched.
// Sums run over 32 fixed lanes (element i goes to
// lane i % 32), whatever the vector width, so results are bitwise equal at
// every SIMD level. The mean is reported as sum / count, so an infinity in
// the data gives an infinite mean (and a NaN variance), as the formula does.
#pragma once

#include <cstddef>

#include "kernels/affine_rows.h"
#include "kernels/half.h"

namespace bnorm::kernels::detail {

constexpr size_t kMomentsChunk = 2048;

struct Moments {
  double count = 0;
  double sum = 0;
  double m2 = 0;  // sum of squared deviations from the mean

  double mean() const noexcept { return sum / count; }
  double variance() const noexcept { return m2 / count; }
};

inline Moments merge(const Moments& a, const Moments& b) noexcept {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const double count = a.count + b.count;
  const double delta = b.mean() - a.mean();
  return {count, a.sum + b.sum, a.m2 + b.m2 + delta * delta * (a.count * b.count / count)};
}

// Moments of x[0, n); dispatch on active_isa(), calling thread only.
// `next` (may be null) is where the caller reads next: its first
// next_n elements (up to a chunk) are prefetched during the last chunk.
// `out_of_cache`: the kernel's data exceed the streaming threshold (isa.h),
// where chunk_prefetch_out_of_cache_active() turns the prefetches on too
// (normalize_and_moments: `stream`).
Moments span_moments(const float* x, size_t n, const float* next = nullptr, size_t next_n = 0,
                     bool out_of_cache = false) noexcept;
Moments span_moments(const double* x, size_t n, const double* next = nullptr, size_t next_n = 0,
                     bool out_of_cache = false) noexcept;
Moments span_moments(const f16* x, size_t n, const f16* next = nullptr, size_t next_n = 0,
                     bool out_of_cache = false) noexcept;
Moments span_moments(const bf16* x, size_t n, const bf16* next = nullptr, size_t next_n = 0,
                     bool out_of_cache = false) noexcept;

// Two rows of n floats in one pass over memory: writes
//   y[i] = fma(x[i] - op.m, op.a, op.b)    (op: Centered, no activation)
// bit for bit as affine_rows does, and returns span_moments(next, n,
// after, after_n), the same bits. The normalization rides along the
// moments loops a few vectors per block, so that writing y (from a row in
// cache) and reading `next` (from memory) overlap, as in memcpy, instead
// of taking turns. `next` must not overlap y.
Moments normalize_and_moments(const float* x, float* y, const RowOp<float>& op, bool stream,
                              const float* next, size_t n, const float* after,
                              size_t after_n) noexcept;

}  // namespace bnorm::kernels::detail
