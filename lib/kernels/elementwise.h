// The element loop under every kernel (internal: include only from
// lib/kernels/*.cpp, after simd.h's rules).
//
//   map_span<I>(x, y, n, stream, op):  y[i..i+W) = op(load(x[i..i+W)), i, W)
//
// over a span of n elements, W lanes at a time at level I; the last
// partial vector is computed on a zero-padded copy and op is told how many
// lanes count, so every element goes through the same vector code (results
// do not depend on where a span starts or ends). With `stream`, stores are
// non-temporal after a few plain ones that align y. y == x is allowed.
// Reencoded: y has x's 16-bit type, so NaN payloads of f16 input need not
// survive the decoding (load_quieted).
//
// Plus the helpers around it: activation on a vector, a switch from the
// run-time activation kind to a compile-time tag, and the OpenMP task loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "kernels/activation.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {

// Work below which a kernel stays on the calling thread, in elements.
constexpr size_t kParallelMinElements = size_t{1} << 15;
// Elements per task when a kernel splits long rows.
constexpr size_t kSegmentElements = size_t{1} << 14;

// The compute vector of storage type T at level I.
template <class I, class T>
using VecOf = decltype(I::load(static_cast<const T*>(nullptr)));

template <class I, bool Reencoded, class T>
inline VecOf<I, T> load_input(const T* p) noexcept {
  if constexpr (Reencoded && std::is_same_v<T, f16>) {
    return I::load_quieted(p);
  } else {
    return I::load(p);
  }
}

template <class I, bool Reencoded, class Tin, class Tout, class Op>
inline void map_partial(const Tin* x, Tout* y, size_t i, size_t count, const Op& op) noexcept {
  using V = VecOf<I, Tin>;
  constexpr size_t W = simd::lanes<V>();
  Tin in[W] = {};
  Tout out[W];
  std::copy(x + i, x + i + count, in);
  I::store(out, op(load_input<I, Reencoded>(in), i, count));
  std::copy(out, out + count, y + i);
}

template <class I, bool Reencoded = false, class Tin, class Tout, class Op>
inline void map_span(const Tin* x, Tout* y, size_t n, bool stream, const Op& op) noexcept {
  using V = VecOf<I, Tin>;
  constexpr size_t W = simd::lanes<V>();
  size_t i = 0;
  if (stream) {
    const size_t head = simd::elements_to_alignment(y, W);
    stream = head != SIZE_MAX;
    if (stream && head > 0) {
      i = std::min(head, n);
      map_partial<I, Reencoded>(x, y, 0, i, op);
    }
  }
  // Four vectors per iteration: all loads before the stores, which keeps
  // more memory accesses in flight (and keeps in place use correct).
  if (stream) {
    for (; i + 4 * W <= n; i += 4 * W) {
      const V v0 = load_input<I, Reencoded>(x + i);
      const V v1 = load_input<I, Reencoded>(x + i + W);
      const V v2 = load_input<I, Reencoded>(x + i + 2 * W);
      const V v3 = load_input<I, Reencoded>(x + i + 3 * W);
      I::stream(y + i, op(v0, i, W));
      I::stream(y + i + W, op(v1, i + W, W));
      I::stream(y + i + 2 * W, op(v2, i + 2 * W, W));
      I::stream(y + i + 3 * W, op(v3, i + 3 * W, W));
    }
    for (; i + W <= n; i += W) I::stream(y + i, op(load_input<I, Reencoded>(x + i), i, W));
  } else {
    for (; i + 4 * W <= n; i += 4 * W) {
      const V v0 = load_input<I, Reencoded>(x + i);
      const V v1 = load_input<I, Reencoded>(x + i + W);
      const V v2 = load_input<I, Reencoded>(x + i + 2 * W);
      const V v3 = load_input<I, Reencoded>(x + i + 3 * W);
      I::store(y + i, op(v0, i, W));
      I::store(y + i + W, op(v1, i + W, W));
      I::store(y + i + 2 * W, op(v2, i + 2 * W, W));
      I::store(y + i + 3 * W, op(v3, i + 3 * W, W));
    }
    for (; i + W <= n; i += W) I::store(y + i, op(load_input<I, Reencoded>(x + i), i, W));
  }
  if (i < n) map_partial<I, Reencoded>(x, y, i, n - i, op);
  if (stream) _mm_sfence();
}

// p[i..i+W) as a vector; lanes past `count` are 0.
template <class I, class C>
inline VecOf<I, C> load_lanes(const C* p, size_t i, size_t count) noexcept {
  constexpr size_t W = simd::lanes<VecOf<I, C>>();
  C tmp[W] = {};
  const C* src = p + i;
  if (count != W) {
    std::copy(src, src + count, tmp);
    src = tmp;
  }
  return I::load(src);
}

template <ActivationKind K>
struct KindTag {
  static constexpr ActivationKind kind = K;
};
// The kinds evaluated one lane at a time, with the run-time kind.
struct PerLaneTag {};

template <ActivationKind K, class V, class S>
inline V activate_vector(KindTag<K>, ActivationKind, const V& v, S alpha, S beta) noexcept {
  return activate<K>(v, alpha, beta);
}

template <class V, class S>
inline V activate_vector(PerLaneTag, ActivationKind kind, const V& v, S alpha, S beta) noexcept {
  V r = v;
  for (size_t k = 0; k < simd::lanes<V>(); ++k) r[k] = apply_activation(kind, S(v[k]), alpha, beta);
  return r;
}

// fn(tag) with the tag of `kind`: one instantiation per vectorized kind,
// one for all the others.
template <class Fn>
inline void with_kind(ActivationKind kind, const Fn& fn) noexcept {
  using K = ActivationKind;
  static_assert(!activation_is_vectorized(K::Elu) && !activation_is_vectorized(K::Tanh));
  switch (kind) {
    case K::None: return fn(KindTag<K::None>{});
    case K::Relu: return fn(KindTag<K::Relu>{});
    case K::LeakyRelu: return fn(KindTag<K::LeakyRelu>{});
    case K::HardSigmoid: return fn(KindTag<K::HardSigmoid>{});
    case K::HardSwish: return fn(KindTag<K::HardSwish>{});
    case K::ThresholdedRelu: return fn(KindTag<K::ThresholdedRelu>{});
    case K::Clip: return fn(KindTag<K::Clip>{});
    case K::Softsign: return fn(KindTag<K::Softsign>{});
    default: return fn(PerLaneTag{});
  }
}

// body(t) for t in [0, tasks), spread over the OpenMP threads when
// `parallel` (static schedule: equal tasks, equal shares).
template <class Fn>
inline void for_tasks(size_t tasks, bool parallel, const Fn& body) noexcept {
#pragma omp parallel for schedule(static) if (parallel && tasks > 1)
  for (size_t t = 0; t < tasks; ++t) body(t);
}

}  // namespace bnorm::kernels::detail
