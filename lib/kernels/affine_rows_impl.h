// The loop bodies of affine_rows.h, templated on the SIMD level (internal:
// included by affine_rows_<level>.cpp, one translation unit per level so
// the levels compile in parallel). Each level defines span_<level> and
// elements_<level> for the four storage types with BNORM_AFFINE_ROWS_LEVEL;
// affine_rows.cpp dispatches to them. Output and input share their storage
// type, so map_span runs with Reencoded = true.
#pragma once

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {

template <class I, class T, class C>
inline void span_body(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) noexcept {
  using V = VecOf<I, T>;
  const V m = simd::splat<V>(op.m);
  const V a = simd::splat<V>(op.a);
  const V b = simd::splat<V>(op.b);
  const ActivationKind kind = op.kind;
  const C alpha = op.alpha;
  const C beta = op.beta;
  with_kind(kind, [&](auto tag) {
    switch (op.mode) {
      case RowMode::Identity:
        return map_span<I, true>(x, y, n, stream, [&](const V& v, size_t, size_t) {
          return activate_vector(tag, kind, v, alpha, beta);
        });
      case RowMode::Plain:
        return map_span<I, true>(x, y, n, stream, [&](const V& v, size_t, size_t) {
          return activate_vector(tag, kind, v * a + b, alpha, beta);
        });
      case RowMode::Centered:
        return map_span<I, true>(x, y, n, stream, [&](const V& v, size_t, size_t) {
          return activate_vector(tag, kind, (v - m) * a + b, alpha, beta);
        });
    }
  });
}

template <class I, class T, class C>
inline void elements_body(const T* x, T* y, size_t n, const ElementOp<C>& op,
                          bool stream) noexcept {
  using V = VecOf<I, T>;
  const ActivationKind kind = op.kind;
  const C alpha = op.alpha;
  const C beta = op.beta;
  with_kind(kind, [&](auto tag) {
    if (op.m == nullptr) {
      return map_span<I, true>(x, y, n, stream, [&](const V& v, size_t i, size_t count) {
        const V a = load_lanes<I>(op.a, i, count);
        const V b = load_lanes<I>(op.b, i, count);
        return activate_vector(tag, kind, v * a + b, alpha, beta);
      });
    }
    map_span<I, true>(x, y, n, stream, [&](const V& v, size_t i, size_t count) {
      const V m = load_lanes<I>(op.m, i, count);
      const V a = load_lanes<I>(op.a, i, count);
      const V b = load_lanes<I>(op.b, i, count);
      return activate_vector(tag, kind, (v - m) * a + b, alpha, beta);
    });
  });
}

// Declarations carry the level's attributes too: a template instantiates
// with the attributes of its first declaration.
#define BNORM_AFFINE_ROWS_DECLARE(level, ENTRY)                                             \
  template <class T, class C>                                                              \
  ENTRY void span_##level(const T* x, T* y, size_t n, const RowOp<C>& op,                  \
                          bool stream) noexcept;                                           \
  template <class T, class C>                                                              \
  ENTRY void elements_##level(const T* x, T* y, size_t n, const ElementOp<C>& op,          \
                              bool stream) noexcept;

BNORM_AFFINE_ROWS_DECLARE(generic, BNORM_ENTRY_GENERIC)
BNORM_AFFINE_ROWS_DECLARE(avx2, BNORM_ENTRY_AVX2)
BNORM_AFFINE_ROWS_DECLARE(avx512, BNORM_ENTRY_AVX512)

// Defines span_<level> and elements_<level> (ENTRY: BNORM_ENTRY_<LEVEL>, I:
// the simd struct) and instantiates them for f32, f64, f16 and bf16.
#define BNORM_AFFINE_ROWS_LEVEL(level, ENTRY, I)                                              \
  template <class T, class C>                                                                \
  ENTRY void span_##level(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) noexcept { \
    span_body<I>(x, y, n, op, stream);                                                       \
  }                                                                                          \
  template <class T, class C>                                                                \
  ENTRY void elements_##level(const T* x, T* y, size_t n, const ElementOp<C>& op,            \
                              bool stream) noexcept {                                        \
    elements_body<I>(x, y, n, op, stream);                                                   \
  }                                                                                          \
  template void span_##level(const float*, float*, size_t, const RowOp<float>&, bool);       \
  template void span_##level(const double*, double*, size_t, const RowOp<double>&, bool);    \
  template void span_##level(const f16*, f16*, size_t, const RowOp<float>&, bool);           \
  template void span_##level(const bf16*, bf16*, size_t, const RowOp<float>&, bool);         \
  template void elements_##level(const float*, float*, size_t, const ElementOp<float>&, bool); \
  template void elements_##level(const double*, double*, size_t, const ElementOp<double>&,   \
                                 bool);                                                      \
  template void elements_##level(const f16*, f16*, size_t, const ElementOp<float>&, bool);   \
  template void elements_##level(const bf16*, bf16*, size_t, const ElementOp<float>&, bool);

}  // namespace bnorm::kernels::detail
