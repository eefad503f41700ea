// kernels::gemm (lib/kernels/gemm.h) on the products of whole networks, one
// thread, at the detected SIMD level: GFLOP/s (2 M N K per call, per second
// of CPU time: one thread on a shared machine) as the counter "flops".
// Shapes (M, N, K): Conv layers as im2col gives them (M output channels, N
// output positions, K = input channels x kernel size) of ResNet-18 at
// 224x224 and of bench/gen_nets.py's detector, one power-of-two K (rows of
// A 4 KiB apart), and a fully connected layer.
// BM_gemm_f32_256bit: the same products in 256-bit vectors (the width AMD
// Zen 4 runs; where the core's level is below AVX-512 both run alike).
// Run: build/bnorm_bench --benchmark_filter=gemm
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstddef>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/isa.h"

namespace {

void gemm_f32(benchmark::State& state) {
  omp_set_num_threads(1);
  const auto m = static_cast<size_t>(state.range(0)), n = static_cast<size_t>(state.range(1)),
             k = static_cast<size_t>(state.range(2));
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.0625f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) * 0.0625f - 0.375f;
  for (auto _ : state) {
    bnorm::kernels::gemm(a.data(), k, b.data(), n, c.data(), n, m, n, k, false);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["flops"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void BM_gemm_f32(benchmark::State& state) { gemm_f32(state); }

// The same at the AVX-512 level in 256-bit vectors (isa.h,
// wide_products_active(): what AMD Zen 4 runs), for the ratio of widths in
// one run; the same bits.
void BM_gemm_f32_256bit(benchmark::State& state) {
  const bool wide = bnorm::kernels::wide_products_active();
  bnorm::kernels::set_wide_products(false);
  gemm_f32(state);
  bnorm::kernels::set_wide_products(wide);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "N", "K"})
    ->Args({64, 12544, 147})   // ResNet 7x7/2 stem
    ->Args({64, 3136, 576})    // ResNet stage 1, 3x3
    ->Args({128, 784, 1152})   // stage 2
    ->Args({256, 196, 2304})   // stage 3
    ->Args({512, 49, 4608})    // stage 4
    ->Args({32, 25600, 27})    // detector stem, 3x3/2 on 3 channels
    ->Args({1024, 100, 1024})  // detector pointwise at stride 32
    ->Args({1, 1000, 512})     // fully connected
    ->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_gemm_f32)->Apply(shapes);
BENCHMARK(BM_gemm_f32_256bit)->Apply(shapes);

}  // namespace
