// Element access shared by the normalization-family kernels (internal: for
// lib/kernels/*.cpp): storage types decoded exactly to double and rounded
// once from double (f16/bf16 to nearest even, half.h), and the split of
// rows over the OpenMP threads.
#pragma once

#include <cstddef>

#include "kernels/elementwise.h"
#include "kernels/half.h"

namespace bnorm::kernels::detail {

inline double decode(float v) noexcept { return v; }
inline double decode(double v) noexcept { return v; }
inline double decode(f16 v) noexcept { return f16_to_f32(v); }
inline double decode(bf16 v) noexcept { return bf16_to_f32(v); }

template <class T>
inline T encode(double v) noexcept {
  if constexpr (std::is_same_v<T, f16>) {
    return f64_to_f16(v);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return f64_to_bf16(v);
  } else {
    return static_cast<T>(v);
  }
}

// body(r0, r1) over [0, items), one range per thread when `elements` is
// large enough to share; `fence`: each thread fences its non-temporal
// stores (for_tasks).
template <class Fn>
inline void for_row_ranges(size_t items, size_t elements, bool fence, const Fn& body) noexcept {
  if (items == 0) return;
  const bool parallel = elements >= kParallelMinElements;
  const size_t tasks = task_count(items, items, parallel);
  for_tasks(tasks, parallel, fence, [&](size_t t) {
    const size_t r0 = task_begin(t, tasks, items);
    const size_t r1 = task_begin(t + 1, tasks, items);
    if (r0 < r1) body(r0, r1);
  });
}

}  // namespace bnorm::kernels::detail
