// Ceilings: loops that do part of a kernel's work, or all of it under
// ideal conditions, measured like the kernels (bench/kernels_bench.cpp) and
// in the same program, so that their ratios to memcpy bound what a kernel
// can reach on the machine (docs/performance.md).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, as in kernels_bench.cpp
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <type_traits>
#include <vector>

#include "bench_support.h"
#include "kernels/bn_train.h"
#include "kernels/half.h"
#include "kernels/instance_norm.h"

namespace {

using namespace bnorm::bench;

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

// Skips the benchmark where the CPU lacks AVX-512F and DQ, which the
// hand-written AVX-512 ceilings below need; true when skipped.
bool skipped_without_avx512dq(benchmark::State& state) {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return false;
  state.SkipWithError("needs AVX-512");
  return true;
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
  if (skipped_without_avx512dq(state)) return;
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

// The ceiling of InstanceNormalization's arithmetic alone, with no memory
// traffic: the instructions of its loop at the AVX-512 level
// (normalize_and_moments in lib/kernels/moments.cpp), per 32 elements
//   the float64 moments of one row: 4 x (convert 8 floats to float64,
//       subtract the shift, add, fma the square)
//   the normalization of another: 2 x (load 16 floats, subtract m, fma, store)
// on three blocks of 2048 floats (24 KB) that stay in L1, repeated over as
// many elements as the shape has and counted as InstanceNormalization
// counts. The time is what the core needs to compute, whatever memory
// does, so the ratio of this row to memcpy bounds InstanceNormalization's.
__attribute__((target("avx512f,avx512dq,fma"))) double in_compute(const float* a, const float* b,
                                                                float* c, size_t n,
                                                                size_t elements) {
  const __m512d k = _mm512_set1_pd(0.5);
  const __m512 m = _mm512_set1_ps(0.5f), sa = _mm512_set1_ps(1.5f), sb = _mm512_set1_ps(0.25f);
  __m512d s1[4], s2[4];
  for (int v = 0; v < 4; ++v) s1[v] = s2[v] = _mm512_setzero_pd();
  for (size_t done = 0; done < elements; done += n) {
    for (size_t i = 0; i + 32 <= n; i += 32) {
      for (int v = 0; v < 2; ++v) {
        const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(b + i + 16 * v), m);
        _mm512_storeu_ps(c + i + 16 * v, _mm512_fmadd_ps(d, sa, sb));
      }
      for (int v = 0; v < 4; ++v) {
        const __m512d e = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(a + i + 8 * v)), k);
        s1[v] = _mm512_add_pd(s1[v], e);
        s2[v] = _mm512_fmadd_pd(e, e, s2[v]);
      }
    }
    benchmark::ClobberMemory();
  }
  double lanes[8];
  double total = 0;
  for (int v = 0; v < 4; ++v) {
    _mm512_storeu_pd(lanes, _mm512_add_pd(s1[v], s2[v]));
    for (const double l : lanes) total += l;
  }
  return total;
}

void BM_ceiling_in_compute(benchmark::State& state) {
  if (skipped_without_avx512dq(state)) return;
  omp_set_num_threads(threads_arg(state));
  const NcsShape shape = shape_arg(state);
  constexpr size_t kBlock = 2048;
  std::vector<Buffer<float>> blocks;
  for (int t = 0; t < 3 * omp_get_max_threads(); ++t) blocks.push_back(input<float>(kBlock));
  run_split(state, shape.elements(), kBlock, [&](size_t begin, size_t end) {
    const size_t t = 3 * static_cast<size_t>(omp_get_thread_num());
    benchmark::DoNotOptimize(in_compute(blocks[t].get(), blocks[t + 1].get(), blocks[t + 2].get(),
                                        kBlock, end - begin));
  });
  report(state, 2 * shape.elements() * sizeof(float));
}


// The ceilings of LayerNormalization's and RMSNormalization's rows with
// the exactness they keep (docs/semantics.md: float64 statistics, the
// element formula ((x - mean) * inv_std) * scale + bias in float64, each
// operation rounded, then rounded once to the storage type): the
// instructions of lib/kernels/layer_norm_rows_avx512.cpp's loops, per 8 elements
//   LayerNormalization  statistics: convert to float64, subtract the
//       shift, add, fma the square (4 sums of 8 lanes each);
//       normalization: convert, subtract, multiply twice, add, round
//   RMSNormalization    statistics: convert, square, add (one sum of 8
//       lanes: the kernel's fixed partial sums); normalization:
//       convert, multiply twice, round (f16 / bf16: each row converted
//       once, stored as float64 by the statistics' loop, which the
//       normalization loads: rms_decoded_compute)
// with the statistics of one row and the normalization of another in the
// same loop (the best overlap), on rows of 768 that stay in L1 (x, the
// row summed, y, and the float64 scale and bias: 15 to 21 KB), repeated over
// as many elements as the shape has and counted as the kernels count (read
// X + write Y). f16 / bf16: F16C or integer decoding, and the kernels'
// rounding through a float rounded to odd (truncated, last bit set when inexact). The ratio of a row to memcpy
// bounds what the kernel can reach on the machine, whatever memory does.
// bf16 as the kernel rounds it with AVX512-BF16 (layer_norm_rows_avx512_bf16.cpp):
// the integer test of exactness, a check for float subnormals, VCVTNEPS2BF16.
#define BNORM_LN_TARGET_NAME "avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,fma,f16c"
#define BNORM_LN_TARGET __attribute__((target(BNORM_LN_TARGET_NAME), always_inline)) inline

template <class T>
BNORM_LN_TARGET __m512d ln_load8(const T* x) {
  if constexpr (std::is_same_v<T, float>) return _mm512_cvtps_pd(_mm256_loadu_ps(x));
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
  if constexpr (std::is_same_v<T, f16>) return _mm512_cvtps_pd(_mm256_cvtph_ps(h));
  return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
}

template <class T>
BNORM_LN_TARGET void ln_store8(T* y, __m512d v) {
  if constexpr (std::is_same_v<T, float>) {
    _mm256_storeu_ps(y, _mm512_cvtpd_ps(v));
  } else {
    const __m256 z = _mm512_cvt_roundpd_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 inexact = _mm512_test_epi64_mask(_mm512_castpd_si512(v), _mm512_set1_epi64(0x1FFFFFFF));
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i b = _mm256_mask_or_epi32(_mm256_castps_si256(z), inexact, _mm256_castps_si256(z), one);
    __m128i h;
    if constexpr (std::is_same_v<T, f16>) {
      h = _mm256_cvtps_ph(_mm256_castsi256_ps(b), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else if (__builtin_expect(_mm256_fpclass_ps_mask(_mm256_castsi256_ps(b), 0x20) == 0, 1)) {
      h = (__m128i)_mm256_cvtneps_pbh(_mm256_castsi256_ps(b));
    } else {
      const __m256i r = _mm256_srli_epi32(
          _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), _mm256_and_si256(_mm256_srli_epi32(b, 16), one)), 16);
      const __mmask8 nan = _mm256_cmp_ps_mask(z, z, _CMP_UNORD_Q);
      h = _mm256_cvtepi32_epi16(_mm256_mask_blend_epi32(nan, r, _mm256_or_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0x40))));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), h);
  }
}

// RMSNormalization of 16-bit data decodes each row once, into a float64
// copy in L1 that the next loop normalizes (layer_norm_rows_impl.h's
// rms_rows_decoded): its ceiling stores row a decoded into da while
// normalizing another decoded row, dx.
template <class T>
__attribute__((target(BNORM_LN_TARGET_NAME))) double rms_decoded_compute(
    const T* a, double* da, const double* dx, T* y, const double* s, size_t n, size_t elements) {
  const __m512d inv = _mm512_set1_pd(1.5);
  __m512d acc = _mm512_setzero_pd();
  for (size_t done = 0; done < elements; done += n) {
    for (size_t j = 0; j + 8 <= n; j += 8) {
      const __m512d e = ln_load8(a + j);
      _mm512_store_pd(da + j, e);
      acc = _mm512_add_pd(acc, _mm512_mul_pd(e, e));
      ln_store8(y + j, _mm512_mul_pd(_mm512_mul_pd(_mm512_load_pd(dx + j), inv), _mm512_loadu_pd(s + j)));
    }
    benchmark::ClobberMemory();
  }
  double lanes[8];
  _mm512_storeu_pd(lanes, acc);
  double total = 0;
  for (const double l : lanes) total += l;
  return total;
}

template <class T, bool kRms>
__attribute__((target(BNORM_LN_TARGET_NAME))) double norm_rows_compute(
    const T* a, const T* x, T* y, const double* s, const double* b, size_t n, size_t elements) {
  const __m512d k = _mm512_set1_pd(0.5), m = _mm512_set1_pd(0.25), inv = _mm512_set1_pd(1.5);
  __m512d s1[4], s2[4];
  for (int v = 0; v < 4; ++v) s1[v] = s2[v] = _mm512_setzero_pd();
  for (size_t done = 0; done < elements; done += n) {
    for (size_t i = 0; i + 32 <= n; i += 32) {
      for (int v = 0; v < 4; ++v) {
        const size_t j = i + 8 * v;
        const __m512d e = ln_load8(a + j);
        if constexpr (kRms) {
          s1[0] = _mm512_add_pd(s1[0], _mm512_mul_pd(e, e));
          ln_store8(y + j, _mm512_mul_pd(_mm512_mul_pd(ln_load8(x + j), inv), _mm512_loadu_pd(s + j)));
        } else {
          const __m512d d = _mm512_sub_pd(e, k);
          s1[v] = _mm512_add_pd(s1[v], d);
          s2[v] = _mm512_fmadd_pd(d, d, s2[v]);
          const __m512d t = _mm512_mul_pd(_mm512_mul_pd(_mm512_sub_pd(ln_load8(x + j), m), inv), _mm512_loadu_pd(s + j));
          ln_store8(y + j, _mm512_add_pd(t, _mm512_loadu_pd(b + j)));
        }
      }
    }
    benchmark::ClobberMemory();
  }
  double lanes[8];
  double total = 0;
  for (int v = 0; v < 4; ++v) {
    _mm512_storeu_pd(lanes, _mm512_add_pd(s1[v], s2[v]));
    for (const double l : lanes) total += l;
  }
  return total;
}

// Shapes as kernels_bench.cpp's family rows: 0 = [32 * 512, 768], 1 = [128, 768].
template <class T, bool kRms>
void ceiling_norm_rows(benchmark::State& state) {
  if (skipped_without_avx512dq(state)) return;
  if (!__builtin_cpu_supports("avx512bf16")) {
    state.SkipWithError("needs AVX512-BF16");
    return;
  }
  omp_set_num_threads(1);
  constexpr size_t kLen = 768;
  const size_t elements = (state.range(0) == 0 ? 32 * 512 : 128) * kLen;
  const Buffer<T> a = input<T>(kLen), x = input<T>(kLen);
  Buffer<T> y(kLen, T{});
  const std::vector<double> s(kLen, 0.75), b(kLen, 0.25);
  // The decoded copies 8.5 KiB apart, as the kernel keeps them (4 KiB
  // apart, the loads would wait for the stores).
  const Buffer<double> decoded(1088 + kLen, 1.0);
  for (auto _ : state) {
    if constexpr (kRms && !std::is_same_v<T, float>) {
      benchmark::DoNotOptimize(rms_decoded_compute<T>(a.get(), decoded.get(), decoded.get() + 1088, y.get(),
                                                       s.data(), kLen, elements));
    } else {
      benchmark::DoNotOptimize(norm_rows_compute<T, kRms>(a.get(), x.get(), y.get(), s.data(), b.data(), kLen, elements));
    }
  }
  report(state, 2 * elements * sizeof(T));
}

void BM_ceiling_layer_norm_compute_f32(benchmark::State& state) { ceiling_norm_rows<float, false>(state); }
void BM_ceiling_layer_norm_compute_f16(benchmark::State& state) { ceiling_norm_rows<f16, false>(state); }
void BM_ceiling_layer_norm_compute_bf16(benchmark::State& state) { ceiling_norm_rows<bf16, false>(state); }
void BM_ceiling_rms_norm_compute_f32(benchmark::State& state) { ceiling_norm_rows<float, true>(state); }
void BM_ceiling_rms_norm_compute_f16(benchmark::State& state) { ceiling_norm_rows<f16, true>(state); }
void BM_ceiling_rms_norm_compute_bf16(benchmark::State& state) { ceiling_norm_rows<bf16, true>(state); }

void family_ceiling_rows(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape"})->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_ceiling_f16_round_trip)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_stats_f64)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_f16_round_trip_256)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_in_f32_stats)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_in_f32_stats_one_read)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_in_compute)->Apply(shapes_and_threads);
BENCHMARK(BM_ceiling_layer_norm_compute_f32)->Apply(family_ceiling_rows);
BENCHMARK(BM_ceiling_layer_norm_compute_f16)->Apply(family_ceiling_rows);
BENCHMARK(BM_ceiling_layer_norm_compute_bf16)->Apply(family_ceiling_rows);
BENCHMARK(BM_ceiling_rms_norm_compute_f32)->Apply(family_ceiling_rows);
BENCHMARK(BM_ceiling_rms_norm_compute_f16)->Apply(family_ceiling_rows);
BENCHMARK(BM_ceiling_rms_norm_compute_bf16)->Apply(family_ceiling_rows);

}  // namespace
