// The element loop under every kernel (internal: include only from
// lib/kernels/*.cpp, after simd.h's rules).
//
//   map_span<I>(x, y, n, stream, op):  y[i..i+W) = op(load(x[i..i+W)), i, W)
//
// over a span of n elements, W lanes at a time at level I; the last
// partial vector is computed on a zero-padded copy and op is told how many
// lanes count, so every element goes through the same vector code (results
// do not depend on where a span starts or ends). With `stream`, stores are
// non-temporal after a few plain ones that align y (the caller fences them,
// see for_tasks). y == x is allowed.
// Reencoded: y has x's 16-bit type, so NaN payloads of f16 input need not
// survive the decoding (load_quieted). Streaming loops also prefetch their
// input.
//
// Plus the helpers around it: activation on a vector, a switch from the
// run-time activation kind to a compile-time tag, and the OpenMP tasks.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "kernels/activation.h"
#include "kernels/simd.h"

namespace bnorm::kernels::detail {

// Work below which a kernel stays on the calling thread, in elements.
constexpr size_t kParallelMinElements = size_t{1} << 15;
// Elements per task when a kernel splits long rows.
constexpr size_t kSegmentElements = size_t{1} << 14;
// How far ahead loops prefetch: streaming loops their input (a single
// thread then reaches ~10% more bandwidth than with the hardware
// prefetcher alone), the others, where cache_prefetch_active() (isa.h),
// their input, and their output for writing (PREFETCHW), which brings data
// in L2 to memcpy's speed. Measured on a Sapphire Rapids core.
constexpr size_t kPrefetchBytes = 2048;
constexpr size_t kCachedPrefetchBytes = 1024;

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
inline void map_partial(const Tin* x, Tout* y, size_t i, size_t count, Op op) noexcept {
  using V = VecOf<I, Tin>;
  constexpr size_t W = simd::lanes<V>();
  Tin in[W] = {};
  Tout out[W];
  std::copy(x + i, x + i + count, in);
  I::store(out, op(load_input<I, Reencoded>(in), i, count));
  std::copy(out, out + count, y + i);
}

// Groups of four vectors: through the level's load4 / store4 / stream4
// where it has them for that storage type (simd_avx512_bf16.h's Avx512Bf16 for bf16),
// else a vector at a time.
template <class I, class T, class V, class = void>
struct HasGroupLoad : std::false_type {};
template <class I, class T, class V>
struct HasGroupLoad<I, T, V, std::void_t<decltype(I::load4(std::declval<const T*>(), std::declval<V*>()))>>
    : std::true_type {};
template <class I, class T, class V, class = void>
struct HasGroupStore : std::false_type {};
template <class I, class T, class V>
struct HasGroupStore<I, T, V, std::void_t<decltype(I::store4(std::declval<T*>(), std::declval<const V*>()))>>
    : std::true_type {};

template <class I, bool Reencoded, class T, class V>
inline void load_group(const T* p, V* v) noexcept {
  constexpr size_t W = simd::lanes<V>();
  if constexpr (HasGroupLoad<I, T, V>::value) {
    I::load4(p, v);
  } else {
    for (size_t k = 0; k < 4; ++k) v[k] = load_input<I, Reencoded>(p + k * W);
  }
}

template <class I, bool Stream, class T, class V>
inline void store_group(T* p, const V* r) noexcept {
  constexpr size_t W = simd::lanes<V>();
  if constexpr (HasGroupStore<I, T, V>::value) {
    if constexpr (Stream) {
      I::stream4(p, r);
    } else {
      I::store4(p, r);
    }
  } else {
    for (size_t k = 0; k < 4; ++k) {
      if constexpr (Stream) {
        I::stream(p + k * W, r[k]);
      } else {
        I::store(p + k * W, r[k]);
      }
    }
  }
}

// The aligned main part of map_span, four vectors per iteration: all loads
// before the stores, which keeps more memory accesses in flight (and in
// place use correct). Returns where it stopped.
template <class I, bool Reencoded, bool Stream, class Tin, class Tout, class Op>
inline size_t map_main(const Tin* x, Tout* y, size_t i, size_t n, const Op& op,
                       bool prefetch_cached) noexcept {
  using V = VecOf<I, Tin>;
  constexpr size_t W = simd::lanes<V>();
  constexpr size_t kStepBytes = 4 * W * sizeof(Tin);
  constexpr size_t kStepOutBytes = 4 * W * sizeof(Tout);
  for (; i + 4 * W <= n; i += 4 * W) {
    if constexpr (Stream) {  // memory-bound: prefetch the input too
      const char* ahead = reinterpret_cast<const char*>(x + i) + kPrefetchBytes;
      for (size_t b = 0; b < kStepBytes; b += 64) simd::prefetch<3>(ahead + b);
    } else if (prefetch_cached) {  // from cache: fetch input and output lines early
      const char* ahead = reinterpret_cast<const char*>(x + i) + kCachedPrefetchBytes;
      char* out_ahead = reinterpret_cast<char*>(y + i) + kCachedPrefetchBytes;
      for (size_t b = 0; b < kStepBytes; b += 64) simd::prefetch<3>(ahead + b);
      for (size_t b = 0; b < kStepOutBytes; b += 64) __builtin_prefetch(out_ahead + b, 1, 3);
    }
    V v[4];
    load_group<I, Reencoded>(x + i, v);
    const V r[4] = {op(v[0], i, W), op(v[1], i + W, W), op(v[2], i + 2 * W, W),
                    op(v[3], i + 3 * W, W)};
    store_group<I, Stream>(y + i, r);
  }
  for (; i + W <= n; i += W) {
    if constexpr (Stream) {
      I::stream(y + i, op(load_input<I, Reencoded>(x + i), i, W));
    } else {
      I::store(y + i, op(load_input<I, Reencoded>(x + i), i, W));
    }
  }
  return i;
}

template <class I, bool Reencoded = false, class Tin, class Tout, class Op>
inline void map_span(const Tin* x, Tout* y, size_t n, bool stream, Op op) noexcept {
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
  i = stream ? map_main<I, Reencoded, true>(x, y, i, n, op, false)
             : map_main<I, Reencoded, false>(x, y, i, n, op, cache_prefetch_active());
  if (i < n) map_partial<I, Reencoded>(x, y, i, n - i, op);
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

// How many tasks to cut `items` into: at least enough for each to hold at
// most max_per_task items, and, when parallel, a multiple of the thread
// count, so that static scheduling gives every thread the same share.
inline size_t task_count(size_t items, size_t max_per_task, bool parallel) noexcept {
  max_per_task = std::max<size_t>(1, max_per_task);
  size_t tasks = std::max<size_t>(1, (items + max_per_task - 1) / max_per_task);
  if (parallel) {
    const auto threads = static_cast<size_t>(std::max(1, omp_get_max_threads()));
    tasks = (tasks + threads - 1) / threads * threads;
  }
  return std::min(tasks, std::max<size_t>(items, 1));
}

// The first item of task t out of `tasks` (task t has items [task_begin(t),
// task_begin(t + 1)); shares differ by one at most).
inline size_t task_begin(size_t t, size_t tasks, size_t items) noexcept {
  return items / tasks * t + std::min(t, items % tasks);
}

// body(t) for t in [0, tasks), spread over the OpenMP threads when
// `parallel` (static schedule: equal tasks, equal shares). With `fence`,
// each thread ends with an sfence, making its non-temporal stores visible
// before the kernel returns.
template <class Fn>
inline void for_tasks(size_t tasks, bool parallel, bool fence, const Fn& body) noexcept {
  if (!parallel || tasks <= 1) {
    for (size_t t = 0; t < tasks; ++t) body(t);
    if (fence) simd::store_fence();
    return;
  }
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (size_t t = 0; t < tasks; ++t) body(t);
    if (fence) simd::store_fence();
  }
}

}  // namespace bnorm::kernels::detail
