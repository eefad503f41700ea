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
// wide_f16_active(), BNORM_CHUNK_PREFETCH=0 or 1 its chunk_prefetch_active(),
// BNORM_ISA=generic, avx2 or avx512 the SIMD level.)
//
// The ceilings (loops that bound what a kernel can reach) are in
// bench/ceilings_bench.cpp, in the same program; the shapes, buffers and
// helpers both use in bench/bench_support.h.
//
// GCC 12's AVX-512 intrinsics start from an "undefined" vector that
// -Wmaybe-uninitialized reports once inlined (GCC bug 105593; simd.h too).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.h"
#include "kernels/activation.h"
#include "kernels/bn_infer.h"
#include "kernels/bn_train.h"
#include "kernels/half.h"
#include "kernels/group_norm.h"
#include "kernels/instance_norm.h"
#include "kernels/layer_norm.h"
#include "kernels/isa.h"

namespace {

using namespace bnorm::bench;

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

// The normalization family's targets, one thread, against memcpy of the
// same bytes (read X once + write Y once): rows 0 = [32 * 512, 768],
// 1 = [128, 768] (LayerNormalization / RMSNormalization over the last
// axis), 2 = GroupNormalization [8, 256, 56, 56] with 32 groups.
NcsShape family_shape(const benchmark::State& state) {
  switch (state.range(0)) {
    case 0: return {32 * 512, 1, 768};
    case 1: return {128, 1, 768};
    default: return {8, 256, 56 * 56};
  }
}

template <class T = float>
void family_memcpy(benchmark::State& state) {
  omp_set_num_threads(1);
  const size_t n = family_shape(state).elements();
  const Buffer<T> x = input<T>(n);
  Buffer<T> y(n, T{});
  for (auto _ : state) {
    std::memcpy(y.get(), x.get(), n * sizeof(T));
    benchmark::ClobberMemory();
  }
  report(state, 2 * n * sizeof(T));
}

void BM_family_memcpy_f32(benchmark::State& state) { family_memcpy(state); }
void BM_family_memcpy_f16(benchmark::State& state) { family_memcpy<f16>(state); }  // f16 and bf16 rows

template <class T = float>
void rows_bench(benchmark::State& state, bool rms) {
  omp_set_num_threads(1);
  const NcsShape shape = family_shape(state);
  const Buffer<T> x = input<T>(shape.elements());
  Buffer<T> y(shape.elements(), T{});
  std::vector<double> scale(shape.s, 0.75), bias(shape.s, 0.25);
  const RowNormParams p{scale.data(), 0, rms ? nullptr : bias.data(), 0, 1e-5, rms};
  for (auto _ : state) {
    norm_rows(x.get(), y.get(), shape.n, shape.s, p, nullptr, nullptr);
    benchmark::ClobberMemory();
  }
  report(state, 2 * shape.elements() * sizeof(T));
}

void BM_layer_norm_f32(benchmark::State& state) { rows_bench(state, false); }
void BM_layer_norm_f16(benchmark::State& state) { rows_bench<f16>(state, false); }
void BM_layer_norm_bf16(benchmark::State& state) { rows_bench<bf16>(state, false); }
void BM_rms_norm_f32(benchmark::State& state) { rows_bench(state, true); }
void BM_rms_norm_f16(benchmark::State& state) { rows_bench<f16>(state, true); }
void BM_rms_norm_bf16(benchmark::State& state) { rows_bench<bf16>(state, true); }

void BM_group_norm_f32(benchmark::State& state) {
  omp_set_num_threads(1);
  const NcsShape shape = family_shape(state);
  const Buffer<float> x = input<float>(shape.elements());
  Buffer<float> y(shape.elements(), 0.0f);
  const Params p(shape.c);
  for (auto _ : state) {
    group_norm_f32(x.get(), y.get(), shape, 32, p.norm());
    benchmark::ClobberMemory();
  }
  report(state, 2 * shape.elements() * sizeof(float));
}

void family_rows(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape"})->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_family_memcpy_f32)->ArgNames({"shape"})->Arg(0)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_layer_norm_f32)->Apply(family_rows);
BENCHMARK(BM_rms_norm_f32)->Apply(family_rows);
BENCHMARK(BM_family_memcpy_f16)->ArgNames({"shape"})->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_layer_norm_f16)->Apply(family_rows);
BENCHMARK(BM_layer_norm_bf16)->Apply(family_rows);
BENCHMARK(BM_rms_norm_f16)->Apply(family_rows);
BENCHMARK(BM_rms_norm_bf16)->Apply(family_rows);
BENCHMARK(BM_group_norm_f32)->ArgNames({"shape"})->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // BNORM_CACHE_PREFETCH=0/1 overrides the CPU-based default (isa.h), to
  // measure both on one machine.
  if (const char* v = std::getenv("BNORM_CACHE_PREFETCH")) set_cache_prefetch(v[0] == '1');
  // BNORM_WIDE_F16=0/1 likewise for isa.h's wide_f16_active().
  if (const char* v = std::getenv("BNORM_WIDE_F16")) set_wide_f16(v[0] == '1');
  // BNORM_CHUNK_PREFETCH=0/1 likewise for isa.h's chunk_prefetch_active().
  if (const char* v = std::getenv("BNORM_CHUNK_PREFETCH")) set_chunk_prefetch(v[0] == '1');
  // BNORM_CHUNK_PREFETCH_OUT_OF_CACHE=0/1 likewise for isa.h's chunk_prefetch_out_of_cache_active().
  if (const char* v = std::getenv("BNORM_CHUNK_PREFETCH_OUT_OF_CACHE")) {
    set_chunk_prefetch_out_of_cache(v[0] == '1');
  }
  // BNORM_ROWS_FUSION=0/1 likewise for isa.h's rows_fusion_active().
  if (const char* v = std::getenv("BNORM_ROWS_FUSION")) set_rows_fusion(v[0] == '1');
  // BNORM_STREAMING_THRESHOLD=<bytes> overrides streaming_threshold_bytes() (isa.h; 0: the default).
  if (const char* v = std::getenv("BNORM_STREAMING_THRESHOLD")) {
    set_streaming_threshold_bytes(std::strtoull(v, nullptr, 10));
  }
  // BNORM_ISA=generic/avx2/avx512 lowers the level (isa.h), to compare the paths.
  if (const char* v = std::getenv("BNORM_ISA")) {
    const std::string level = v;
    set_active_isa(level == "generic" ? Isa::Generic : level == "avx2" ? Isa::Avx2 : Isa::Avx512);
  }
  benchmark::AddCustomContext("kernels_isa", isa_name(active_isa()));
  benchmark::AddCustomContext("avx512_bf16", avx512_bf16_active() ? "on" : "off");
  benchmark::AddCustomContext("cache_prefetch", cache_prefetch_active() ? "on" : "off");
  benchmark::AddCustomContext("wide_f16", wide_f16_active() ? "on" : "off");
  benchmark::AddCustomContext("chunk_prefetch", chunk_prefetch_active() ? "on" : "off");
  benchmark::AddCustomContext("chunk_prefetch_out_of_cache", chunk_prefetch_out_of_cache_active() ? "on" : "off");
  benchmark::AddCustomContext("rows_fusion", rows_fusion_active() ? "on" : "off");
  benchmark::AddCustomContext("streaming_threshold_bytes",
                              std::to_string(streaming_threshold_bytes()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
