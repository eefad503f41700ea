// What the benchmark programs share (bench/kernels_bench.cpp,
// bench/ceilings_bench.cpp): the shapes and thread counts of the arguments,
// page-aligned buffers, the plausible parameters and input data, how bytes
// are reported, and the split of a plain loop over the threads.
#pragma once

#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/half.h"
#include "kernels/layout.h"

namespace bnorm::bench {

using namespace bnorm::kernels;

inline NcsShape shape_arg(const benchmark::State& state) {
  switch (state.range(0)) {
    case 0: return {32, 64, 112 * 112};
    case 1: return {1, 64, 56 * 56};
    default: return {4, 64, 28 * 28};  // in cache like 1, but N > 1 (BN training)
  }
}

inline int threads_arg(const benchmark::State& state) {
  return state.range(1) == 0 ? omp_get_num_procs() : static_cast<int>(state.range(1));
}

// Page-aligned, first touched by the threads that will use it.
template <class T>
struct Buffer {
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data;
  explicit Buffer(size_t n, T value)
      : data(static_cast<T*>(std::aligned_alloc(4096, (n * sizeof(T) + 4095) / 4096 * 4096))) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) data.get()[i] = value;
  }
  T* get() const { return data.get(); }
};

// Per-channel parameters of a plausible trained layer.
struct Params {
  std::vector<float> scale, bias, mean, var;
  explicit Params(size_t c) : scale(c), bias(c), mean(c), var(c) {
    for (size_t i = 0; i < c; ++i) {
      scale[i] = 0.5f + 0.01f * static_cast<float>(i);
      bias[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
      mean[i] = 0.05f * static_cast<float>(i % 5);
      var[i] = 1.0f + 0.02f * static_cast<float>(i);
    }
  }
  BnInferParams<float> infer() const {
    return {scale.data(), bias.data(), mean.data(), var.data(), 1e-5f};
  }
  NormParams<float> norm() const { return {scale.data(), bias.data(), 1e-5f}; }
};

template <class T>
T sample(size_t i) {
  const float v = static_cast<float>(i % 251) / 64.0f - 2.0f;
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, f16>) return f32_to_f16(v);
  else return f32_to_bf16(v);
}

template <class T>
Buffer<T> input(size_t n) {
  Buffer<T> x(n, T{});
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) x.get()[i] = sample<T>(i);
  return x;
}

inline void report(benchmark::State& state, size_t bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes_per_iteration));
  state.counters["threads"] = omp_get_max_threads();
}

// The benchmark loop of the plain loops (memcpy, the ceilings): [0, n)
// split into one range per thread, each starting at a multiple of `granule`
// elements, and fn(begin, end) on each.
template <class Fn>
void run_split(benchmark::State& state, size_t n, size_t granule, const Fn& fn) {
  const int threads = omp_get_max_threads();
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (int t = 0; t < threads; ++t) {
      const size_t begin = n * t / threads / granule * granule;
      const size_t end = t + 1 == threads ? n : n * (t + 1) / threads / granule * granule;
      fn(begin, end);
    }
    benchmark::ClobberMemory();
  }
}

// Shapes 0 and 1, one thread and every core.
inline void shapes_and_threads(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "threads"});
  for (int shape : {0, 1}) {
    for (int threads : {1, 0}) b->Args({shape, threads});
  }
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace bnorm::bench
