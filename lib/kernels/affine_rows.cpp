// The normalization loops of affine_rows.h, instantiated per SIMD level.
// No FMA contraction: (x - m) * a + b rounds after the product and the sum,
// as the scalar formula does, at every level.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/affine_rows.h"

#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {
namespace {

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
        return map_span<I>(x, y, n, stream, [&](V v, size_t, size_t) {
          return activate_vector(tag, kind, v, alpha, beta);
        });
      case RowMode::Plain:
        return map_span<I>(x, y, n, stream, [&](V v, size_t, size_t) {
          return activate_vector(tag, kind, v * a + b, alpha, beta);
        });
      case RowMode::Centered:
        return map_span<I>(x, y, n, stream, [&](V v, size_t, size_t) {
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
      return map_span<I>(x, y, n, stream, [&](V v, size_t i, size_t count) {
        const V a = load_lanes<I>(op.a, i, count);
        const V b = load_lanes<I>(op.b, i, count);
        return activate_vector(tag, kind, v * a + b, alpha, beta);
      });
    }
    map_span<I>(x, y, n, stream, [&](V v, size_t i, size_t count) {
      const V m = load_lanes<I>(op.m, i, count);
      const V a = load_lanes<I>(op.a, i, count);
      const V b = load_lanes<I>(op.b, i, count);
      return activate_vector(tag, kind, (v - m) * a + b, alpha, beta);
    });
  });
}

template <class T, class C>
BNORM_ENTRY_GENERIC void span_generic(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) {
  span_body<simd::Generic>(x, y, n, op, stream);
}
template <class T, class C>
BNORM_ENTRY_AVX2 void span_avx2(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) {
  span_body<simd::Avx2>(x, y, n, op, stream);
}
template <class T, class C>
BNORM_ENTRY_AVX512 void span_avx512(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) {
  span_body<simd::Avx512>(x, y, n, op, stream);
}

template <class T, class C>
BNORM_ENTRY_GENERIC void elements_generic(const T* x, T* y, size_t n, const ElementOp<C>& op,
                                          bool stream) {
  elements_body<simd::Generic>(x, y, n, op, stream);
}
template <class T, class C>
BNORM_ENTRY_AVX2 void elements_avx2(const T* x, T* y, size_t n, const ElementOp<C>& op,
                                    bool stream) {
  elements_body<simd::Avx2>(x, y, n, op, stream);
}
template <class T, class C>
BNORM_ENTRY_AVX512 void elements_avx512(const T* x, T* y, size_t n, const ElementOp<C>& op,
                                        bool stream) {
  elements_body<simd::Avx512>(x, y, n, op, stream);
}

template <class T, class C>
void span_dispatch(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) noexcept {
  if (n == 0) return;
  switch (active_isa()) {
    case Isa::Avx512: return span_avx512(x, y, n, op, stream);
    case Isa::Avx2: return span_avx2(x, y, n, op, stream);
    case Isa::Generic: return span_generic(x, y, n, op, stream);
  }
}

template <class T, class C>
void elements_dispatch(const T* x, T* y, size_t n, const ElementOp<C>& op, bool stream) noexcept {
  if (n == 0) return;
  switch (active_isa()) {
    case Isa::Avx512: return elements_avx512(x, y, n, op, stream);
    case Isa::Avx2: return elements_avx2(x, y, n, op, stream);
    case Isa::Generic: return elements_generic(x, y, n, op, stream);
  }
}

}  // namespace

void affine_span(const float* x, float* y, size_t n, const RowOp<float>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}
void affine_span(const double* x, double* y, size_t n, const RowOp<double>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}
void affine_span(const f16* x, f16* y, size_t n, const RowOp<float>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}
void affine_span(const bf16* x, bf16* y, size_t n, const RowOp<float>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}

void affine_elements(const float* x, float* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}
void affine_elements(const double* x, double* y, size_t n, const ElementOp<double>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}
void affine_elements(const f16* x, f16* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}
void affine_elements(const bf16* x, bf16* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}

}  // namespace bnorm::kernels::detail
