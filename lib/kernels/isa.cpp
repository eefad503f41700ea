// CPU detection and the process-wide settings of the kernels (see isa.h).
#include "kernels/isa.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#if BNORM_SIMD_LEVELS
#include <cpuid.h>
#endif

namespace bnorm::kernels {
namespace {

Isa detect() noexcept {
#if !BNORM_SIMD_LEVELS
  return Isa::Generic;
#else
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma")) {
    return Isa::Avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") &&
      __builtin_cpu_supports("fma")) {
    return Isa::Avx2;
  }
  return Isa::Generic;
#endif
}

bool detect_avx512_bf16() noexcept {
#if !BNORM_SIMD_LEVELS
  return false;
#else
  __builtin_cpu_init();
  return detected_isa() == Isa::Avx512 && __builtin_cpu_supports("avx512bf16");
#endif
}

std::atomic<bool>& bf16_active() noexcept {
  static std::atomic<bool> active{detect_avx512_bf16()};
  return active;
}

bool detect_avx512_vnni() noexcept {
#if !BNORM_SIMD_LEVELS
  return false;
#else
  __builtin_cpu_init();
  return detected_isa() == Isa::Avx512 && __builtin_cpu_supports("avx512vnni");
#endif
}

std::atomic<bool>& vnni_active() noexcept {
  static std::atomic<bool> active{detect_avx512_vnni()};
  return active;
}

// Intel's CPUs get the tunings measured on them (isa.h: cache_prefetch,
// chunk_prefetch, wide_f16); the others those measured on AMD Zen 4.
bool cpu_is_intel() noexcept {
#if BNORM_SIMD_LEVELS
  __builtin_cpu_init();
  return __builtin_cpu_is("intel") != 0;
#else
  return false;
#endif
}

// The CPU's family as CPUID leaf 1 gives it (base family, plus the
// extended family when the base is 15): 25 for AMD Zen 3 and Zen 4, 26 for
// Zen 5. 0 where unknown.
unsigned cpu_family() noexcept {
#if BNORM_SIMD_LEVELS
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return 0;
  const unsigned base = (eax >> 8) & 0xF;
  return base == 0xF ? base + ((eax >> 20) & 0xFF) : base;
#else
  return 0;
#endif
}

// AMD Zen 5 (family 26) and later: full-width 512-bit datapaths.
bool cpu_is_amd_zen5_or_later() noexcept {
#if BNORM_SIMD_LEVELS
  __builtin_cpu_init();
  return __builtin_cpu_is("amd") != 0 && cpu_family() >= 26;
#else
  return cpu_family() >= 26;  // 0: no such CPU off x86 or without the levels
#endif
}

std::atomic<bool>& cache_prefetch() noexcept {
  static std::atomic<bool> on{cpu_is_intel()};
  return on;
}

std::atomic<bool>& chunk_prefetch() noexcept {
  static std::atomic<bool> on{cpu_is_intel()};
  return on;
}

std::atomic<bool>& wide_f16() noexcept {
  static std::atomic<bool> on{cpu_is_intel()};
  return on;
}

// AMD Zen 4 (family 19h: the only one of that family with AVX-512) runs
// 512-bit operations as two passes through 256-bit units.
bool cpu_is_zen4() noexcept {
#if BNORM_SIMD_LEVELS
  __builtin_cpu_init();
  return __builtin_cpu_is("amd") != 0 && __builtin_cpu_is("amdfam19h") != 0;
#else
  return false;
#endif
}

std::atomic<bool>& wide_products() noexcept {
  static std::atomic<bool> on{!cpu_is_zen4()};
  return on;
}

std::atomic<bool>& chunk_prefetch_out_of_cache() noexcept {
  static std::atomic<bool> on{cpu_is_amd_zen5_or_later()};
  return on;
}

std::atomic<bool>& rows_fusion() noexcept {
  static std::atomic<bool> on{cpu_is_amd_zen5_or_later()};
  return on;
}

std::atomic<int>& active_level() noexcept {
  static std::atomic<int> level{static_cast<int>(detected_isa())};
  return level;
}

// The size of the last-level cache this CPU shares, as Linux reports it
// (sysfs, from CPUID's cache topology), in bytes; 0 when unknown.
size_t sysfs_llc_bytes() noexcept {
  std::FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
  if (f == nullptr) return 0;
  unsigned long kib = 0;
  char unit = 0;
  const int got = std::fscanf(f, "%lu%c", &kib, &unit);
  std::fclose(f);
  return got == 2 && unit == 'K' ? static_cast<size_t>(kib) << 10 : 0;
}

// The smaller of glibc's and Linux's last-level cache: on an AMD EPYC Zen 5
// (family 26 model 2) glibc 2.36's sysconf gave 384 MiB (CPUID 0x80000006,
// all the package's L3) where the core shares 32 MiB (sysfs), which put
// the threshold at 144 MiB and kept every kernel from streaming; on Zen 4
// and Intel the two agree.
size_t default_streaming_threshold() noexcept {
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const size_t sysfs = sysfs_llc_bytes();
  if (sysfs > 0 && (llc <= 0 || sysfs < static_cast<size_t>(llc))) llc = static_cast<long>(sysfs);
  if (llc <= 0) return size_t{16} << 20;
  return std::max(static_cast<size_t>(llc) / 8 * 3, size_t{4} << 20);
}

std::atomic<size_t>& streaming_threshold() noexcept {
  static std::atomic<size_t> threshold{default_streaming_threshold()};
  return threshold;
}

}  // namespace

Isa detected_isa() noexcept {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() noexcept {
  return static_cast<Isa>(active_level().load(std::memory_order_relaxed));
}

Isa set_active_isa(Isa wanted) noexcept {
  const Isa isa = std::min(wanted, detected_isa());
  active_level().store(static_cast<int>(isa), std::memory_order_relaxed);
  return isa;
}

const char* isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Generic: return BNORM_X86 ? "generic (SSE2)" : "generic";
    case Isa::Avx2: return "AVX2+F16C";
    case Isa::Avx512: return "AVX-512";
  }
  return "?";
}

bool avx512_bf16_active() noexcept {
  return bf16_active().load(std::memory_order_relaxed);
}

bool set_avx512_bf16(bool wanted) noexcept {
  const bool on = wanted && detect_avx512_bf16();
  bf16_active().store(on, std::memory_order_relaxed);
  return on;
}

bool avx512_vnni_active() noexcept {
  return vnni_active().load(std::memory_order_relaxed);
}

bool set_avx512_vnni(bool wanted) noexcept {
  const bool on = wanted && detect_avx512_vnni();
  vnni_active().store(on, std::memory_order_relaxed);
  return on;
}

bool cache_prefetch_active() noexcept {
  return cache_prefetch().load(std::memory_order_relaxed);
}

void set_cache_prefetch(bool on) noexcept {
  cache_prefetch().store(on, std::memory_order_relaxed);
}

bool chunk_prefetch_active() noexcept {
  return chunk_prefetch().load(std::memory_order_relaxed);
}

void set_chunk_prefetch(bool on) noexcept {
  chunk_prefetch().store(on, std::memory_order_relaxed);
}

bool chunk_prefetch_out_of_cache_active() noexcept {
  return chunk_prefetch_out_of_cache().load(std::memory_order_relaxed);
}

void set_chunk_prefetch_out_of_cache(bool on) noexcept {
  chunk_prefetch_out_of_cache().store(on, std::memory_order_relaxed);
}

bool wide_f16_active() noexcept {
  return wide_f16().load(std::memory_order_relaxed);
}

void set_wide_f16(bool on) noexcept {
  wide_f16().store(on, std::memory_order_relaxed);
}

Isa f16_isa() noexcept {
  const Isa isa = active_isa();
  return isa == Isa::Avx512 && !wide_f16_active() ? Isa::Avx2 : isa;
}

bool wide_products_active() noexcept {
  return wide_products().load(std::memory_order_relaxed);
}

void set_wide_products(bool on) noexcept {
  wide_products().store(on, std::memory_order_relaxed);
}

bool rows_fusion_active() noexcept {
  return rows_fusion().load(std::memory_order_relaxed);
}

void set_rows_fusion(bool on) noexcept {
  rows_fusion().store(on, std::memory_order_relaxed);
}

size_t streaming_threshold_bytes() noexcept {
  return streaming_threshold().load(std::memory_order_relaxed);
}

void set_streaming_threshold_bytes(size_t bytes) noexcept {
  streaming_threshold().store(bytes == 0 ? default_streaming_threshold() : bytes,
                              std::memory_order_relaxed);
}

}  // namespace bnorm::kernels
