// CPU detection and the process-wide settings of the kernels (see isa.h).
#include "kernels/isa.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

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

std::atomic<int>& active_level() noexcept {
  static std::atomic<int> level{static_cast<int>(detected_isa())};
  return level;
}

size_t default_streaming_threshold() noexcept {
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
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

size_t streaming_threshold_bytes() noexcept {
  return streaming_threshold().load(std::memory_order_relaxed);
}

void set_streaming_threshold_bytes(size_t bytes) noexcept {
  streaming_threshold().store(bytes == 0 ? default_streaming_threshold() : bytes,
                              std::memory_order_relaxed);
}

}  // namespace bnorm::kernels
