// Throughput of the kernels against memcpy, the yardstick: a kernel that
// streams through memory can at best move bytes as fast as memcpy does.
//
// Each benchmark reports bytes_per_second counting the bytes the kernel
// must move at the least:
//   memcpy, BN inference (f32, f16, bf16, fused Relu), InstanceNormalization:
//       read X once + write Y once  (IN re-reads each row from cache)
//   BN training: read X twice (statistics over the whole tensor must be
//       complete before any output) + write Y once
// Arguments: shape 0 = [32, 64, 112, 112], 1 = [1, 64, 56, 56] (and, for
// memcpy<float> and BN training, 2 = [4, 64, 28, 28]); threads
// 1, or 0 for every core (omp_set_num_threads inside the benchmark; memcpy
// is split over the same threads). X and Y are distinct buffers.
//
// Run: build/bnorm_bench [--benchmark_filter=...] [--benchmark_repetitions=N]
// (BNORM_CACHE_PREFETCH=0 or 1 in the environment overrides isa.h's
// cache_prefetch_active() default for the run, BNORM_WIDE_F16=0 or 1 its
// wide_f16_active().)
// GCC 12's AVX-512 intrinsics start from an "undefined" vector that
// -Wmaybe-uninitialized reports once inlined (GCC bug 105593; simd.h too).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/activation.h"
#include "kernels/bn_infer.h"
#include "kernels/bn_train.h"
#include "kernels/half.h"
#include "kernels/instance_norm.h"
#include "kernels/isa.h"

namespace {

using namespace bnorm::kernels;

NcsShape shape_arg(const benchmark::State& state) {
  switch (state.range(0)) {
    case 0: return {32, 64, 112 * 112};
    case 1: return {1, 64, 56 * 56};
    default: return {4, 64, 28 * 28};  // in cache like 1, but N > 1 (BN training)
  }
}

int threads_arg(const benchmark::State& state) {
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

void report(benchmark::State& state, size_t bytes_per_iteration) {
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

template <class T>
void BM_memcpy(benchmark::State& state) {
  omp_set_num_threads(threads_arg(state));
  const size_t n = shape_arg(state).elements();
  const Buffer<T> x = input<T>(n);
  Buffer<T> y(n, T{});
  run_split(state, n, 1, [&](size_t begin, size_t end) {
    std::memcpy(y.get() + begin, x.get() + begin, (end - begin) * sizeof(T));
  });
  report(state, 2 * n * sizeof(T));
}

template <class T>
void bn_infer_bench(benchmark::State& state,
                    void (*kernel)(const T*, T*, NcsShape, const BnInferParams<float>&,
                                   const Activation&) noexcept,
                    const Activation& act) {
  omp_set_num_threads(threads_arg(state));
  const NcsShape shape = shape_arg(state);
  const Buffer<T> x = input<T>(shape.elements());
  Buffer<T> y(shape.elements(), T{});
  const Params p(shape.c);
  for (auto _ : state) {
    kernel(x.get(), y.get(), shape, p.infer(), act);
    benchmark::ClobberMemory();
  }
  report(state, 2 * shape.elements() * sizeof(T));
}

void BM_bn_infer_f32(benchmark::State& state) { bn_infer_bench(state, bn_infer_f32, {}); }
void BM_bn_infer_relu_f32(benchmark::State& state) {
  bn_infer_bench(state, bn_infer_f32, Activation::relu());
}
void BM_bn_infer_f16(benchmark::State& state) { bn_infer_bench(state, bn_infer_f16, {}); }
void BM_bn_infer_bf16(benchmark::State& state) { bn_infer_bench(state, bn_infer_bf16, {}); }

void BM_bn_train_f32(benchmark::State& state) {
  omp_set_num_threads(threads_arg(state));
  const NcsShape shape = shape_arg(state);
  const Buffer<float> x = input<float>(shape.elements());
  Buffer<float> y(shape.elements(), 0.0f);
  const Params p(shape.c);
  std::vector<double> mean(shape.c), var(shape.c);
  for (auto _ : state) {
    bn_train_f32(x.get(), y.get(), shape, p.norm(), mean.data(), var.data());
    benchmark::ClobberMemory();
  }
  report(state, 3 * shape.elements() * sizeof(float));
}

void BM_instance_norm_f32(benchmark::State& state) {
  omp_set_num_threads(threads_arg(state));
  const NcsShape shape = shape_arg(state);
  const Buffer<float> x = input<float>(shape.elements());
  Buffer<float> y(shape.elements(), 0.0f);
  const Params p(shape.c);
  for (auto _ : state) {
    instance_norm_f32(x.get(), y.get(), shape, p.norm());
    benchmark::ClobberMemory();
  }
  report(state, 2 * shape.elements() * sizeof(float));
}

// The ceiling of InstanceNormalization and BN training with statistics in
// float64 (docs/semantics.md): the per-channel mean and variance of X
// alone, with no normalization pass and no output, counted as
// InstanceNormalization counts (read X + write Y). On [1, 64, 56, 56]
// IN's rows and BN's channels are the same 3136 elements, so this is the
// statistics work of either kernel; the ratio of this row to memcpy bounds
// IN's ratio, and (times 1.5, training counting X twice) training's.
void BM_ceiling_stats_f64(benchmark::State& state) {
  omp_set_num_threads(threads_arg(state));
  const NcsShape shape = shape_arg(state);
  const Buffer<float> x = input<float>(shape.elements());
  std::vector<double> mean(shape.c), var(shape.c);
  for (auto _ : state) {
    bn_batch_stats_f32(x.get(), shape, mean.data(), var.data());
    benchmark::DoNotOptimize(mean.data());
    benchmark::ClobberMemory();
  }
  report(state, 2 * shape.elements() * sizeof(float));
}

// The ceiling of any exact f16 kernel at the AVX-512 level: F16C decoding
// to float and encoding back (round to nearest even), nothing else, four
// vectors per iteration like the kernels. Whatever a BN f16 kernel adds
// (the multiply-add, NaN handling) can only be slower; the ratio of this
// row to memcpy bounds the ratio any exact f16 kernel can reach here.
__attribute__((target("avx512f"))) void f16_round_trip(const f16* x, f16* y, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 v[4];
    for (int k = 0; k < 4; ++k)
      v[k] = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 16 * k)));
    for (int k = 0; k < 4; ++k)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i + 16 * k),
                          _mm512_maskz_cvtps_ph(0xFFFF, v[k], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) y[i] = f32_to_f16(f16_to_f32(x[i]));
}

// A round trip loop over the whole f16 buffer, split over the threads at
// multiples of `granule` elements; `supported` false skips the benchmark.
void f16_round_trip_bench(benchmark::State& state, bool supported, const char* needs,
                          void (*loop)(const f16*, f16*, size_t), size_t granule) {
  if (!supported) {
    state.SkipWithError(needs);
    return;
  }
  omp_set_num_threads(threads_arg(state));
  const size_t n = shape_arg(state).elements();
  const Buffer<f16> x = input<f16>(n);
  Buffer<f16> y(n, f16{});
  run_split(state, n, granule, [&](size_t begin, size_t end) {
    loop(x.get() + begin, y.get() + begin, end - begin);
  });
  report(state, 2 * n * sizeof(f16));
}

void BM_ceiling_f16_round_trip(benchmark::State& state) {
  f16_round_trip_bench(state, __builtin_cpu_supports("avx512f"), "needs AVX-512", f16_round_trip, 64);
}

// The same round trip with the 256-bit forms (F16C), which is what float16
// kernels run on CPUs other than Intel's (isa.h's wide_f16_active()): on an
// AMD EPYC (Zen 4) the 512-bit forms are the slower (docs/performance.md).
__attribute__((target("avx2,f16c"))) void f16_round_trip_256(const f16* x, f16* y, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 v[4];
    for (int k = 0; k < 4; ++k)
      v[k] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i + 8 * k)));
    for (int k = 0; k < 4; ++k)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i + 8 * k),
                       _mm256_cvtps_ph(v[k], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) y[i] = f32_to_f16(f16_to_f32(x[i]));
}

void BM_ceiling_f16_round_trip_256(benchmark::State& state) {
  f16_round_trip_bench(state, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"),
                       "needs AVX2 and F16C", f16_round_trip_256, 32);
}

// Ceilings of InstanceNormalization's loop with float32 statistics, which
// the kernels do not use (docs/semantics.md: they stay float64): rows of S
// floats, row r normalized (y = (x - m) * a + b, fixed m, a, b) while the
// sums of row r + 1 are taken, as normalize_and_moments does, but each
// lane's x - k and (x - k)^2 added in float32 over 8 blocks of 32 elements
// before float64. `same_row` normalizes row r + 1 itself, from L1: the
// loop as if the cache reuse of IN's second read were perfect. Counted as
// InstanceNormalization counts; the ratios to memcpy bound what float32
// statistics could buy (docs/performance.md, 2026-11-24 afternoon).
__attribute__((target("avx512f,avx512dq,fma"))) double in_rows_f32_stats(const float* x, float* y,
                                                                      size_t rows, size_t S,
                                                                      bool same_row) {
  const __m512 m = _mm512_set1_ps(0.5f), a = _mm512_set1_ps(1.5f), b = _mm512_set1_ps(0.25f);
  const __m512 neg_k = _mm512_set1_ps(-0.5f);
  double total = 0;
  for (size_t r = 0; r + 1 < rows; ++r) {
    const float* next = x + (r + 1) * S;
    const float* xr = same_row ? next : x + r * S;
    float* yr = y + r * S;
    __m512d s1[4], s2[4];
    for (int k = 0; k < 4; ++k) s1[k] = s2[k] = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 256 <= S; i += 256) {
      __m512 f1[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
      __m512 f2[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
      for (size_t j = i; j < i + 256; j += 32) {
        for (int v = 0; v < 2; ++v) {
          const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(xr + j + 16 * v), m);
          _mm512_storeu_ps(yr + j + 16 * v, _mm512_fmadd_ps(d, a, b));
          const __m512 e = _mm512_add_ps(_mm512_loadu_ps(next + j + 16 * v), neg_k);
          f1[v] = _mm512_add_ps(f1[v], e);
          f2[v] = _mm512_fmadd_ps(e, e, f2[v]);
        }
      }
      for (int v = 0; v < 2; ++v) {
        s1[2 * v] = _mm512_add_pd(s1[2 * v], _mm512_cvtps_pd(_mm512_castps512_ps256(f1[v])));
        s1[2 * v + 1] = _mm512_add_pd(s1[2 * v + 1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(f1[v], 1)));
        s2[2 * v] = _mm512_add_pd(s2[2 * v], _mm512_cvtps_pd(_mm512_castps512_ps256(f2[v])));
        s2[2 * v + 1] = _mm512_add_pd(s2[2 * v + 1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(f2[v], 1)));
      }
    }
    for (; i < S; ++i) {
      yr[i] = (xr[i] - 0.5f) * 1.5f + 0.25f;
      total += next[i];
    }
    for (int k = 0; k < 4; ++k) total += _mm512_reduce_add_pd(s1[k]) + _mm512_reduce_add_pd(s2[k]);
  }
  return total;
}

void ceiling_in_f32_stats(benchmark::State& state, bool same_row) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) {
    state.SkipWithError("needs AVX-512");
    return;
  }
  omp_set_num_threads(threads_arg(state));
  const NcsShape shape = shape_arg(state);
  const size_t rows = shape.n * shape.c;
  const Buffer<float> x = input<float>(shape.elements());
  Buffer<float> y(shape.elements(), 0.0f);
  run_split(state, rows, 1, [&](size_t r0, size_t r1) {
    benchmark::DoNotOptimize(
        in_rows_f32_stats(x.get() + r0 * shape.s, y.get() + r0 * shape.s, r1 - r0, shape.s, same_row));
  });
  report(state, 2 * shape.elements() * sizeof(float));
}

void BM_ceiling_in_f32_stats(benchmark::State& state) { ceiling_in_f32_stats(state, false); }
void BM_ceiling_in_f32_stats_one_read(benchmark::State& state) { ceiling_in_f32_stats(state, true); }

void shapes_and_threads(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "threads"});
  for (int shape : {0, 1}) {
    for (int threads : {1, 0}) b->Args({shape, threads});
  }
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

// Shape 2 as well: BN training takes one pass over memory when every
// channel is one row (N = 1, shape 1) and two otherwise; shape 2 (the
// same bytes in cache, N = 4) measures the second way.
void training_shapes(benchmark::internal::Benchmark* b) {
  shapes_and_threads(b);
  for (int threads : {1, 0}) b->Args({2, threads});
}

BENCHMARK(BM_memcpy<float>)->Apply(training_shapes);
BENCHMARK(BM_memcpy<f16>)->Apply(shapes_and_threads);
BENCHMARK(BM_bn_infer_f32)->Apply(shapes_and_threads);
BENCHMARK(BM_bn_infer_relu_f32)->Apply(shapes_and_threads);
BENCHMARK(BM_bn_infer_f16)->Apply(shapes_and_threads);
BENCHMARK(BM_bn_infer_bf16)->Apply(shapes_and_threads);
BENCHMARK(BM_bn_train_f32)->Apply(training_shapes);
BENCHMARK(BM_instance_norm_f32)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_f16_round_trip)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_stats_f64)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_f16_round_trip_256)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_in_f32_stats)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_in_f32_stats_one_read)->Apply(shapes_and_threads);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // BNORM_CACHE_PREFETCH=0/1 overrides the CPU-based default (isa.h), to
  // measure both on one machine.
  if (const char* v = std::getenv("BNORM_CACHE_PREFETCH")) set_cache_prefetch(v[0] == '1');
  // BNORM_WIDE_F16=0/1 likewise for isa.h's wide_f16_active().
  if (const char* v = std::getenv("BNORM_WIDE_F16")) set_wide_f16(v[0] == '1');
  benchmark::AddCustomContext("kernels_isa", isa_name(active_isa()));
  benchmark::AddCustomContext("avx512_bf16", avx512_bf16_active() ? "on" : "off");
  benchmark::AddCustomContext("cache_prefetch", cache_prefetch_active() ? "on" : "off");
  benchmark::AddCustomContext("wide_f16", wide_f16_active() ? "on" : "off");
  benchmark::AddCustomContext("streaming_threshold_bytes",
                              std::to_string(streaming_threshold_bytes()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
