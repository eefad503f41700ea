// Per-channel normalization of an [N, C, S] tensor (internal: for
// lib/kernels/*.cpp):
//
//   y[n, c, :] = op_c(x[n, c, :])   for every n and c,  op_c = channel_op(c)
//
// where op_c is a RowOp of affine_rows.h (Plain or Centered, one mode for
// all channels). Two ways through, with the same arithmetic, so the result
// does not depend on the way:
//  - rows of S >= kRowMinElements: tasks of whole rows (one per thread,
//    up to kMaxRowsPerTask), or of segments of one row when rows are longer
//    than kSegmentElements, each row with its channel's op;
//  - shorter rows (S = 1 for [N, C] data): the ops of up to kBlockElements
//    consecutive (c, s) positions are expanded into per-element arrays on
//    the stack, and applied to that block of a range of n by
//    affine_elements.
// Large tensors are split over the OpenMP threads; large outputs written to
// another buffer use non-temporal stores. y == x allowed.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/affine.h"
#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/layout.h"

namespace bnorm::kernels::detail {

constexpr size_t kRowMinElements = 64;
constexpr size_t kMaxRowsPerTask = 256;
constexpr size_t kBlockElements = 1024;

// The op normalizing with batch statistics (mean, var in double):
// fma(x - m, a, b) with m = mean rounded to C, and a, b from to_affine in
// double with the rest of the mean, mean - m, folded into b. Subtracting m
// first keeps the precision of x - mean when |mean| >> sqrt(var).
template <class C>
RowOp<C> centered_op(double mean, double var, double scale, double bias, double epsilon) noexcept {
  const C m = static_cast<C>(mean);
  const Affine<double> f = to_affine(scale, bias, mean - static_cast<double>(m), var, epsilon);
  return {RowMode::Centered, m, static_cast<C>(f.scale), static_cast<C>(f.shift),
          ActivationKind::None, 0, 0};
}

template <class T, class C, class ChannelOp>
void normalize_channels(const T* x, T* y, NcsShape shape, const ChannelOp& channel_op) noexcept {
  const size_t total = shape.elements();
  if (total == 0) return;
  const bool stream = x != y && total * sizeof(T) >= streaming_threshold_bytes();
  const bool parallel = total >= kParallelMinElements;
  const size_t S = shape.s;
  const size_t rows = shape.n * shape.c;

  if (S > kSegmentElements) {  // long rows: segments of one row per task
    const size_t segments = (S + kSegmentElements - 1) / kSegmentElements;
    for_tasks(rows * segments, parallel, stream, [&](size_t t) {
      const size_t row = t / segments;
      const size_t begin = task_begin(t % segments, segments, S);
      const size_t end = task_begin(t % segments + 1, segments, S);
      const RowOp<C> op = channel_op(row % shape.c);
      affine_rows(x + row * S + begin, y + row * S + begin, 1, end - begin, &op, stream);
    });
    return;
  }

  if (S >= kRowMinElements) {  // whole rows, up to kMaxRowsPerTask per task
    const size_t tasks = task_count(rows, kMaxRowsPerTask, parallel);
    for_tasks(tasks, parallel, stream, [&](size_t t) {
      const size_t r0 = task_begin(t, tasks, rows);
      const size_t r1 = task_begin(t + 1, tasks, rows);
      RowOp<C> ops[kMaxRowsPerTask];
      for (size_t r = r0; r < r1; ++r) ops[r - r0] = channel_op(r % shape.c);
      affine_rows(x + r0 * S, y + r0 * S, r1 - r0, S, ops, stream);
    });
    return;
  }

  // Short rows: blocks of (c, s) positions with expanded parameters, each
  // applied to a range of n.
  const size_t plane = shape.c * S;  // elements per n
  const size_t block = std::min(plane, kBlockElements);
  const size_t blocks = (plane + block - 1) / block;
  const size_t parts = task_count(shape.n, shape.n, parallel);
  for_tasks(blocks * parts, parallel, stream, [&](size_t t) {
    const size_t j0 = (t / parts) * block;
    const size_t len = std::min(block, plane - j0);
    C m[kBlockElements];
    C a[kBlockElements];
    C b[kBlockElements];
    RowOp<C> op{};
    for (size_t j = 0; j < len; ++j) {
      if (j == 0 || (j0 + j) % S == 0) op = channel_op((j0 + j) / S);
      m[j] = op.m;
      a[j] = op.a;
      b[j] = op.b;
    }
    const ElementOp<C> ops{op.mode == RowMode::Centered ? m : nullptr, a, b, op.kind, op.alpha,
                           op.beta};
    const size_t n0 = task_begin(t % parts, parts, shape.n);
    const size_t n1 = task_begin(t % parts + 1, parts, shape.n);
    affine_elements(x + n0 * plane + j0, y + n0 * plane + j0, n1 - n0, plane, len, ops, stream);
  });
}

}  // namespace bnorm::kernels::detail
