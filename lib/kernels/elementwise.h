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

template <class I, class Tin, class Tout, class Op>
inline void map_partial(const Tin* x, Tout* y, size_t i, size_t count, const Op& op) noexcept {
  using V = VecOf<I, Tin>;
  constexpr size_t W = simd::lanes<V>();
  Tin in[W] = {};
  Tout out[W];
  std::copy(x + i, x + i + count, in);
  I::store(out, op(I::load(in), i, count));
  std::copy(out, out + count, y + i);
}

template <class I, class Tin, class Tout, class Op>
inline void map_span(const Tin* x, Tout* y, size_t n, bool stream, const Op& op) noexcept {
  using V = VecOf<I, Tin>;
  constexpr size_t W = simd::lanes<V>();
  size_t i = 0;
  if (stream) {
    const size_t head = simd::elements_to_alignment(y, W);
    stream = head != SIZE_MAX;
    if (stream && head > 0) {
      i = std::min(head, n);
      map_partial<I>(x, y, 0, i, op);
    }
  }
  if (stream) {
    for (; i + W <= n; i += W) I::stream(y + i, op(I::load(x + i), i, W));
  } else {
    for (; i + W <= n; i += W) I::store(y + i, op(I::load(x + i), i, W));
  }
  if (i < n) map_partial<I>(x, y, i, n - i, op);
  if (stream) _mm_sfence();
}

// p[i..i+W) as a vector; lanes past `count` are 0.
template <class I, class C>
inline auto load_lanes(const C* p, size_t i, size_t count) noexcept {
  using V = VecOf<I, C>;
  constexpr size_t W = simd::lanes<V>();
  if (count == W) return I::load(p + i);
  C tmp[W] = {};
  std::copy(p + i, p + i + count, tmp);
  return I::load(tmp);
}

template <ActivationKind K>
struct KindTag {
  static constexpr ActivationKind kind = K;
};
// The kinds evaluated one lane at a time, with the run-time kind.
struct PerLaneTag {};

template <ActivationKind K, class V, class S>
inline V activate_vector(KindTag<K>, ActivationKind, V v, S alpha, S beta) noexcept {
  return activate<K>(v, alpha, beta);
}

template <class V, class S>
inline V activate_vector(PerLaneTag, ActivationKind kind, V v, S alpha, S beta) noexcept {
  for (size_t k = 0; k < simd::lanes<V>(); ++k) v[k] = apply_activation(kind, S(v[k]), alpha, beta);
  return v;
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
