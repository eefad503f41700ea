// GroupNormalization (see group_norm.h): per (n, g), the moments of the
// group's C / G * S consecutive elements, then its channels normalized by
// affine_rows while the group is still in cache (a group of
// [8, 256, 56, 56] with 32 groups is 100 KB of floats: L2).
// No FMA contraction in to_affine, whatever flags the library is built with.
#pragma GCC optimize("fp-contract=off")

#include "kernels/group_norm.h"

#include <algorithm>

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/moments.h"
#include "kernels/normalize.h"
#include "kernels/norm_common.h"

namespace bnorm::kernels {
namespace {

template <class T, class C>
void group_norm(const T* x, T* y, NcsShape shape, size_t groups, const NormParams<C>& p) noexcept {
  const size_t total = shape.elements();
  if (total == 0 || groups == 0 || shape.c % groups != 0) return;
  const bool stream = x != y && total * sizeof(T) >= streaming_threshold_bytes();
  const size_t per_group = shape.c / groups;
  const size_t len = per_group * shape.s;
  const bool ahead_next = stream && chunk_prefetch_out_of_cache_active();
  detail::for_row_ranges(shape.n * groups, total, stream, [&](size_t r0, size_t r1) {
    detail::RowOp<C> ops[detail::kMaxRowsPerTask];
    for (size_t r = r0; r < r1; ++r) {
      const size_t offset = r * len;  // group r = (n, g) starts at channel r * per_group
      // Out of cache on Zen 5 (isa.h's chunk_prefetch_out_of_cache_active()),
      // the last chunk of this group prefetches the first of the next:
      // [8,256,56,56] 1.18-1.21 -> 1.10-1.13 ms of CPU.
      const bool ahead = ahead_next && r + 1 < r1;
      const detail::Moments m = detail::span_moments(x + offset, len, ahead ? x + offset + len : nullptr,
                                                     ahead ? std::min(len, detail::kMomentsChunk) : 0, stream);
      const size_t c0 = (r % groups) * per_group;
      for (size_t k0 = 0; k0 < per_group; k0 += detail::kMaxRowsPerTask) {
        const size_t count = std::min(detail::kMaxRowsPerTask, per_group - k0);
        for (size_t k = 0; k < count; ++k) {
          const size_t c = c0 + k0 + k;
          ops[k] = detail::centered_op<C>(m.mean(), m.variance(), p.scale[c], p.bias[c], p.epsilon);
        }
        const size_t at = offset + k0 * shape.s;
        detail::affine_rows(x + at, y + at, count, shape.s, ops, stream);
      }
    }
  });
}

}  // namespace

void group_norm_f32(const float* x, float* y, NcsShape shape, size_t groups,
                    const NormParams<float>& p) noexcept {
  group_norm(x, y, shape, groups, p);
}
void group_norm_f64(const double* x, double* y, NcsShape shape, size_t groups,
                    const NormParams<double>& p) noexcept {
  group_norm(x, y, shape, groups, p);
}
void group_norm_f16(const f16* x, f16* y, NcsShape shape, size_t groups,
                    const NormParams<float>& p) noexcept {
  group_norm(x, y, shape, groups, p);
}
void group_norm_bf16(const bf16* x, bf16* y, NcsShape shape, size_t groups,
                     const NormParams<float>& p) noexcept {
  group_norm(x, y, shape, groups, p);
}

}  // namespace bnorm::kernels
