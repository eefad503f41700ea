// Which SIMD level the kernels run at. The level is detected once from the
// CPU and the OS (__builtin_cpu_supports checks that the OS saves the
// registers), and every kernel dispatches on active_isa() at call time, so
// one x86-64 binary runs everywhere and uses AVX2/AVX-512 where present.
//
//   Generic  SSE2, every x86-64 CPU (elsewhere: the compiler's vectors)
//   Avx2     AVX2 + FMA3 + F16C (Haswell and later, Zen)
//   Avx512   AVX-512 F, BW, DQ and VL, FMA3, F16C (Skylake-SP and later, Zen 4)
//
// Results are bitwise identical at every level: products are fused with
// a sum only through fma() (one rounding at every level, libm's fma at
// Generic), nothing is contracted otherwise, and reductions use a fixed
// number of partial sums whatever the vector width.
// Tests and benchmarks may lower the level to compare the paths.
#pragma once

#include <cstddef>

// The Avx2 and Avx512 levels are written in GCC's idiom (vector arguments
// passed between templates inlined into target-attributed entry points),
// which clang 14 refuses. Built with clang (the libFuzzer build,
// docs/reliability.md), the kernels have the Generic level only: the
// other levels' entry points run the Generic code and detected_isa() is
// Generic. GCC builds (the product, and `make test-sanitize`) have all three.
// Off x86 (aarch64: `make test-aarch64-kernels`) there is the Generic
// level only, its vectors the compiler's (NEON), with the same bits: it
// uses no x86 instruction, and its streaming stores are plain stores.
#if defined(__x86_64__) || defined(__i386__)
#define BNORM_X86 1
#else
#define BNORM_X86 0
#endif
#if defined(__clang__) || !BNORM_X86
#define BNORM_SIMD_LEVELS 0
#else
#define BNORM_SIMD_LEVELS 1
#endif

namespace bnorm::kernels {

enum class Isa { Generic, Avx2, Avx512 };

// The best level this CPU supports.
Isa detected_isa() noexcept;

// The level the kernels use now (initially detected_isa()).
Isa active_isa() noexcept;

// Selects the level the kernels use, clamped to detected_isa(); returns the
// level now active. Process-wide; not meant to change while kernels run.
Isa set_active_isa(Isa wanted) noexcept;

const char* isa_name(Isa isa) noexcept;

// Whether the Avx512 level's normalization loops (affine_rows.h) round
// float to bfloat16 with AVX512-BF16's VCVTNEPS2BF16 / VCVTNE2PS2BF16
// (Cooper Lake, Sapphire Rapids, Zen 4) instead of integer operations. Same
// bits either way: the instructions round to nearest even and encode NaN
// as f32_to_bf16 does, and the vectors they would get wrong (float
// subnormals, which they flush to zero) take the integer path.
// Initially on where the CPU has it.
bool avx512_bf16_active() noexcept;

// Turns it on or off (on only where the CPU has it); returns the state now.
// Process-wide, for tests and benchmarks, like set_active_isa().
bool set_avx512_bf16(bool wanted) noexcept;

// Whether the Avx512 level's 8-bit matrix product (igemm.h) multiplies
// with AVX512-VNNI's VPDPBUSD (Cascade Lake, Ice Lake, Zen 4) instead of
// widening to 16 bits for VPMADDWD. Same integers either way (igemm.h).
// Initially on where the CPU has it.
bool avx512_vnni_active() noexcept;

// Turns it on or off (on only where the CPU has it); returns the state now.
// Process-wide, for tests and benchmarks, like set_active_isa().
bool set_avx512_vnni(bool wanted) noexcept;

// Whether loops over data in cache prefetch their input and output a few
// lines ahead (elementwise.h). Initially on for Intel CPUs, where it
// brought BN f32 in L2 to memcpy's speed (Sapphire Rapids), and off
// elsewhere: on an AMD EPYC (Zen 4) the same prefetches held BN f32 in L2
// at 0.80 of memcpy, against 0.94 to 1.07 without (docs/performance.md).
// Never changes results.
bool cache_prefetch_active() noexcept;

// Sets it; process-wide, for tests and benchmarks.
void set_cache_prefetch(bool on) noexcept;

// Whether the statistics loops (moments.cpp) prefetch the next chunk of
// their data into L2 while they work on this one. Initially on for Intel
// CPUs, where the loops were written and measured with it (Sapphire
// Rapids), and off elsewhere: on an AMD EPYC (Zen 4) InstanceNormalization
// out of cache measured 0.82 to 0.88 of memcpy without it, 0.71 to 0.73
// with it, and BN training and InstanceNormalization in cache a few
// percent faster (docs/performance.md, 2026-11-24 evening). Never changes
// results.
bool chunk_prefetch_active() noexcept;
void set_chunk_prefetch(bool on) noexcept;

// The same prefetches, but only in kernels whose data exceed the streaming
// threshold (below): GroupNormalization and InstanceNormalization
// (moments.h's `out_of_cache`). Initially on for AMD Zen 5 and later
// (family 26 and up), off elsewhere: on an AMD EPYC Zen 5 (family 26
// model 2) GroupNormalization f32 [8,256,56,56] took 1.29 to 1.38 ms of CPU
// with them against 1.47 to 1.66 without, InstanceNormalization f32
// [32,64,112,112] 5.6 to 6.1 against 6.9 to 7.5, while in cache (with
// chunk_prefetch_active(), which prefetches at every size) InstanceNorm and
// BN training were about 10% slower (docs/performance.md, 2026-11-27).
// Never changes results.
bool chunk_prefetch_out_of_cache_active() noexcept;
void set_chunk_prefetch_out_of_cache(bool on) noexcept;

// Whether float16 data at the Avx512 level are converted 16 at a time
// (512-bit F16C forms) or at the Avx2 level, 8 at a time. Initially on for
// Intel CPUs and off elsewhere: on an AMD EPYC (Zen 4) the 512-bit
// VCVTPH2PS/VCVTPS2PH held BN f16 in cache at 0.65 of memcpy, against
// 0.80 with the 256-bit forms (docs/performance.md); on Intel Xeons the
// 512-bit forms reached 0.88. Never changes results (every level gives the
// same bits). f16_isa() is the level float16 kernels run at.
bool wide_f16_active() noexcept;
void set_wide_f16(bool on) noexcept;
Isa f16_isa() noexcept;

// Whether the matrix products (gemm.h, conv_plane.h) at the Avx512 level
// run in 512-bit vectors, or in 256-bit ones. Initially on everywhere but
// AMD Zen 4, whose 512-bit operations take two passes through 256-bit
// units: there 256-bit tiles measured 83 to 91 GFLOP/s against 70 for
// 512-bit ones (2026-11-25). On AMD Zen 5 (full-width datapaths) 512-bit
// tiles measured 1.3 to 1.9 times the 256-bit ones (2026-11-27,
// docs/performance.md). Never changes results: each element's operations
// are the same at every width.
bool wide_products_active() noexcept;
void set_wide_products(bool on) noexcept;

// Whether the Avx512 LayerNormalization rows (layer_norm_rows_impl.h) take
// the next row's statistics in the loop that normalizes this one at every
// size, storing outputs beyond the streaming threshold non-temporally, or,
// off, only when the call's rows fit in L2 (1 MiB), with plain stores.
// Initially on for AMD Zen 5 and later (family 26 and up) and off elsewhere:
// on an AMD EPYC Zen 5 (family 26 model 2) f32 [32*512, 768] out of cache
// took 2.7 to 3.7 ms of CPU fused and streamed against 4.9 to 5.2 unfused
// (memcpy 2.4 to 3.0; unfused and streamed: 5.9 to 6.3), f16 and bf16 rows
// a few percent less; on Zen 4, fused out of cache measured 10% slower
// (docs/performance.md, 2026-11-25 and 2026-11-27). RMSNormalization rows
// keep their loops (on Zen 5, fused or not measured the same). Never
// changes results.
bool rows_fusion_active() noexcept;
void set_rows_fusion(bool on) noexcept;

// Kernels whose output (written to a buffer other than their input) is at
// least this large store it with non-temporal stores, which skip reading
// the destination into the cache first. The size is 3/8 of the last-level
// cache, close to glibc's memcpy rule, or 16 MiB when the cache size is
// unknown: beyond it the output would not stay in cache anyway. The cache
// is the smaller of glibc's sysconf and Linux's sysfs (cpu0's index3): on
// an AMD EPYC Zen 5 sysconf reports the whole package's L3 (384 MiB, a
// 144 MiB threshold that streamed nothing), sysfs the 32 MiB the core
// shares (a 12 MiB threshold, as on Zen 4).
size_t streaming_threshold_bytes() noexcept;

// Overrides the threshold (0 restores the default); for tests and
// benchmarks, like set_active_isa().
void set_streaming_threshold_bytes(size_t bytes) noexcept;

}  // namespace bnorm::kernels
