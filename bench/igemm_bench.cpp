// kernels::igemm (lib/kernels/igemm.h) on the products of bench/gen_nets.py's
// int8 YOLOv8n-style network (ConvInteger by im2col: M output channels, N
// output positions, K = input channels x kernel size; int8 weights as A with
// zero point 0, uint8 activations as B with zero point 128), one thread, at
// each SIMD level (and at Avx512 without VNNI): integer operations per
// second of CPU time (2 M N K per call) as the counter "ops".
// Run: build/bnorm_bench --benchmark_filter=igemm
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/igemm.h"
#include "kernels/isa.h"

namespace {

// range(3): 0 Generic, 1 Avx2, 2 Avx512 without VNNI, 3 Avx512 with it.
void BM_igemm(benchmark::State& state) {
  using namespace bnorm::kernels;
  omp_set_num_threads(1);
  const auto m = static_cast<size_t>(state.range(0)), n = static_cast<size_t>(state.range(1)),
             k = static_cast<size_t>(state.range(2));
  const int64_t level = state.range(3);
  const Isa isa = level == 0 ? Isa::Generic : level == 1 ? Isa::Avx2 : Isa::Avx512;
  const Isa was = active_isa();
  const bool vnni_was = avx512_vnni_active();
  if (set_active_isa(isa) != isa || set_avx512_vnni(level == 3) != (level == 3)) {
    set_active_isa(was);
    set_avx512_vnni(vnni_was);
    state.SkipWithError("level not available on this CPU");
    return;
  }
  std::vector<uint8_t> a(m * k), b(k * n);
  std::vector<int32_t> c(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 37 % 255);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 11 % 256);
  const int32_t za = 0, zb = 128;
  const IgemmOperand wa{a.data(), k, true, &za, 0}, xb{b.data(), n, false, &zb, 0};
  for (auto _ : state) {
    igemm(wa, xb, c.data(), n, m, n, k);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_active_isa(was);
  set_avx512_vnni(vnni_was);
  state.counters["ops"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k),
                                             benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_igemm)
    ->ArgNames({"M", "N", "K", "level"})
    ->ArgsProduct({{16}, {102400}, {27}, {0, 1, 2, 3}})    // stem, 3x3/2 on 3 channels at 640x640
    ->ArgsProduct({{32}, {25600}, {144}, {0, 1, 2, 3}})    // 3x3/2, 16 -> 32 channels
    ->ArgsProduct({{32}, {6400}, {288}, {0, 1, 2, 3}})     // C2f bottleneck 3x3 at stride 8
    ->ArgsProduct({{128}, {1600}, {576}, {0, 1, 2, 3}})    // 3x3/2, 64 -> 128 channels
    ->ArgsProduct({{256}, {400}, {1152}, {0, 1, 2, 3}})    // 3x3/2, 128 -> 256 channels
    ->ArgsProduct({{256}, {400}, {512}, {0, 1, 2, 3}})     // SPPF's 1x1 on 512 channels
    ->Unit(benchmark::kMicrosecond);

}  // namespace
