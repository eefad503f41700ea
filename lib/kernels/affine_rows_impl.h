// The loop bodies of affine_rows.h, templated on the SIMD level (internal:
// included by affine_rows_<level>.cpp, one translation unit per level so
// the levels compile in parallel). Each level defines rows_<level> and
// elements_<level> for the four storage types with BNORM_AFFINE_ROWS_LEVEL;
// affine_rows.cpp dispatches to them. Output and input share their storage
// type, so map_span runs with Reencoded = true.
#pragma once

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {

// Rows r of len elements, each with ops[r]'s m, a, b; mode, kind, alpha
// and beta are ops[0]'s (the same for every row, see affine_rows.h), so the
// switches on them run once per call. The per-vector ops capture by value:
// copies stay in registers, where references would be reloaded after every
// store through y.
template <class I, class T, class C>
inline void rows_body(const T* x, T* y, size_t rows, size_t len, const RowOp<C>* ops,
                      bool stream) noexcept {
  using V = VecOf<I, T>;
  const ActivationKind kind = ops[0].kind;
  const C alpha = ops[0].alpha;
  const C beta = ops[0].beta;
  with_kind(kind, [&](auto tag) {
    for (size_t r = 0; r < rows; ++r) {
      const T* xr = x + r * len;
      T* yr = y + r * len;
      const V m = simd::splat<V>(ops[r].m);
      const V a = simd::splat<V>(ops[r].a);
      const V b = simd::splat<V>(ops[r].b);
      switch (ops[0].mode) {
        case RowMode::Identity:
          map_span<I, true>(xr, yr, len, stream, [=](const V& v, size_t, size_t) {
            return activate_vector(tag, kind, v, alpha, beta);
          });
          break;
        case RowMode::Plain:
          map_span<I, true>(xr, yr, len, stream, [=](const V& v, size_t, size_t) {
            return activate_vector(tag, kind, I::fma(v, a, b), alpha, beta);
          });
          break;
        case RowMode::Centered:
          map_span<I, true>(xr, yr, len, stream, [=](const V& v, size_t, size_t) {
            return activate_vector(tag, kind, I::fma(v - m, a, b), alpha, beta);
          });
          break;
      }
    }
  });
}

template <class I, class T, class C>
inline void elements_body(const T* x, T* y, size_t rows, size_t stride, size_t n,
                          const ElementOp<C>& op, bool stream) noexcept {
  using V = VecOf<I, T>;
  const ActivationKind kind = op.kind;
  const C alpha = op.alpha;
  const C beta = op.beta;
  with_kind(kind, [&](auto tag) {
    for (size_t r = 0; r < rows; ++r) {
      const T* xr = x + r * stride;
      T* yr = y + r * stride;
      if (op.m == nullptr) {
        map_span<I, true>(xr, yr, n, stream, [&](const V& v, size_t i, size_t count) {
          const V a = load_lanes<I>(op.a, i, count);
          const V b = load_lanes<I>(op.b, i, count);
          return activate_vector(tag, kind, I::fma(v, a, b), alpha, beta);
        });
      } else {
        map_span<I, true>(xr, yr, n, stream, [&](const V& v, size_t i, size_t count) {
          const V m = load_lanes<I>(op.m, i, count);
          const V a = load_lanes<I>(op.a, i, count);
          const V b = load_lanes<I>(op.b, i, count);
          return activate_vector(tag, kind, I::fma(v - m, a, b), alpha, beta);
        });
      }
    }
  });
}

// Declarations carry the level's attributes too: a template instantiates
// with the attributes of its first declaration.
#define BNORM_AFFINE_ROWS_DECLARE(level, ENTRY)                                           \
  template <class T, class C>                                                            \
  ENTRY void rows_##level(const T* x, T* y, size_t rows, size_t len, const RowOp<C>* ops, \
                          bool stream) noexcept;                                         \
  template <class T, class C>                                                            \
  ENTRY void elements_##level(const T* x, T* y, size_t rows, size_t stride, size_t len,  \
                              const ElementOp<C>& op, bool stream) noexcept;

BNORM_AFFINE_ROWS_DECLARE(generic, BNORM_ENTRY_GENERIC)
BNORM_AFFINE_ROWS_DECLARE(avx2, BNORM_ENTRY_AVX2)
BNORM_AFFINE_ROWS_DECLARE(avx512, BNORM_ENTRY_AVX512)
BNORM_AFFINE_ROWS_DECLARE(avx512_bf16, BNORM_ENTRY_AVX512_BF16)

// Defines rows_<level> and elements_<level> (ENTRY: BNORM_ENTRY_<LEVEL>, I:
// the simd struct) and instantiates them for f32, f64, f16 and bf16.
#define BNORM_AFFINE_ROWS_LEVEL(level, ENTRY, I)                                             \
  BNORM_AFFINE_ROWS_DEFINE(level, ENTRY, I)                                                 \
  BNORM_AFFINE_ROWS_INSTANTIATE(level, float, float)                                        \
  BNORM_AFFINE_ROWS_INSTANTIATE(level, double, double)                                      \
  BNORM_AFFINE_ROWS_INSTANTIATE(level, f16, float)                                          \
  BNORM_AFFINE_ROWS_INSTANTIATE(level, bf16, float)

// The definitions alone, for levels that instantiate only some types
// (affine_rows_avx512_bf16.cpp).
#define BNORM_AFFINE_ROWS_DEFINE(level, ENTRY, I)                                            \
  template <class T, class C>                                                               \
  ENTRY void rows_##level(const T* x, T* y, size_t rows, size_t len, const RowOp<C>* ops,    \
                          bool stream) noexcept {                                           \
    rows_body<I>(x, y, rows, len, ops, stream);                                             \
  }                                                                                         \
  template <class T, class C>                                                               \
  ENTRY void elements_##level(const T* x, T* y, size_t rows, size_t stride, size_t len,     \
                              const ElementOp<C>& op, bool stream) noexcept {               \
    elements_body<I>(x, y, rows, stride, len, op, stream);                                  \
  }

#define BNORM_AFFINE_ROWS_INSTANTIATE(level, T, C)                                            \
  template void rows_##level(const T*, T*, size_t, size_t, const RowOp<C>*, bool) noexcept;   \
  template void elements_##level(const T*, T*, size_t, size_t, size_t, const ElementOp<C>&, \
                                 bool) noexcept;

}  // namespace bnorm::kernels::detail
