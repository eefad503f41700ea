// Helpers shared by the kernels' unit tests (lib/kernels/*_test.cpp), not a
// library header: .hpp, so neither installed nor part of the layering check.
//
//  - the SIMD levels to run each test at, and a guard restoring the
//    process-wide kernel settings;
//  - storage-type traits for templated tests (decode to double, round once
//    from double, the unit of rounding at a value);
//  - the tolerances of the kernel tests, each against a float64 reference
//    written from the spec formula in the test itself:
//      f64   |got - ref| <= 1e-12 |ref| + 1e-14 + 2^-49 * magnitude
//      f32   |got - ref| <= 1e-5 |ref| + 1e-6
//      f16, bf16  |got - ref| <= one unit of the type at ref
//                                + 2^-20 * (magnitude + |ref|)
//    where `magnitude` bounds the terms the kernel's evaluation sums (say
//    |x * a| + |mean * a| + |B|): the rounding error of a float (double)
//    evaluation, which only matters under cancellation.
//    NaN must match NaN, an infinity the same infinity.
#pragma once

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/half.h"
#include "kernels/isa.h"
#include "kernels/layout.h"

namespace bnorm::kernels::testing {

// Every SIMD level this CPU has, lowest first.
inline std::vector<Isa> available_isas() {
  std::vector<Isa> levels;
  for (Isa isa : {Isa::Generic, Isa::Avx2, Isa::Avx512}) {
    if (isa <= detected_isa()) levels.push_back(isa);
  }
  return levels;
}

// Every SIMD level this CPU has, lowest first, with the Avx512 level twice
// for the matrix products (isa.h, wide_products_active()): 256-bit, then
// 512-bit vectors. Sets each in turn and calls f(name).
template <class F>
void for_each_product_variant(F&& f) {
  for (Isa isa : available_isas()) {
    set_active_isa(isa);
    for (bool wide : {false, true}) {
      if (!wide && isa != Isa::Avx512) continue;
      set_wide_products(wide);
      f(std::string(isa_name(isa)) + (isa == Isa::Avx512 ? (wide ? " 512-bit" : " 256-bit") : ""));
    }
  }
}

// Restores the active SIMD level, AVX512-BF16's and AVX512-VNNI's use, the
// AMD Zen 5 tunings, the product width and the streaming threshold on exit.
class SettingsGuard {
 public:
  // Float16 kernels then run at the level set, whatever the CPU's default
  // (isa.h's wide_f16_active()), so that level sweeps test every level's code.
  SettingsGuard()
      : isa_(active_isa()), bf16_(avx512_bf16_active()), vnni_(avx512_vnni_active()), wide_f16_(wide_f16_active()),
        chunk_prefetch_(chunk_prefetch_active()),
        chunk_prefetch_out_of_cache_(chunk_prefetch_out_of_cache_active()),
        rows_fusion_(rows_fusion_active()), wide_products_(wide_products_active()) {
    set_wide_f16(true);
  }
  ~SettingsGuard() {
    set_active_isa(isa_);
    set_avx512_bf16(bf16_);
    set_avx512_vnni(vnni_);
    set_wide_f16(wide_f16_);
    set_chunk_prefetch(chunk_prefetch_);
    set_chunk_prefetch_out_of_cache(chunk_prefetch_out_of_cache_);
    set_rows_fusion(rows_fusion_);
    set_wide_products(wide_products_);
    set_streaming_threshold_bytes(0);
  }
  SettingsGuard(const SettingsGuard&) = delete;
  SettingsGuard& operator=(const SettingsGuard&) = delete;

 private:
  Isa isa_;
  bool bf16_;
  bool vnni_;
  bool wide_f16_;
  bool chunk_prefetch_;
  bool chunk_prefetch_out_of_cache_;
  bool rows_fusion_;
  bool wide_products_;
};

inline uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline float float_from_bits(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

template <class T>
struct Type;

template <>
struct Type<float> {
  using Compute = float;
  static constexpr const char* name = "f32";
  static double decode(float v) { return v; }
  static float encode(double v) { return static_cast<float>(v); }
  static uint64_t bits(float v) { return bits_of(v); }
};

template <>
struct Type<double> {
  using Compute = double;
  static constexpr const char* name = "f64";
  static double decode(double v) { return v; }
  static double encode(double v) { return v; }
  static uint64_t bits(double v) { return bits_of(v); }
};

template <>
struct Type<f16> {
  using Compute = float;
  static constexpr const char* name = "f16";
  static double decode(f16 v) { return f16_to_f32(v); }
  static f16 encode(double v) { return f64_to_f16(v); }
  static uint64_t bits(f16 v) { return v.bits; }
  // Distance between neighbouring f16 values around |v|.
  static double unit(double v) {
    const double a = std::fabs(v);
    if (a < 0x1p-14) return 0x1p-24;
    return std::ldexp(1.0, std::ilogb(a) - 10);
  }
};

template <>
struct Type<bf16> {
  using Compute = float;
  static constexpr const char* name = "bf16";
  static double decode(bf16 v) { return bf16_to_f32(v); }
  static bf16 encode(double v) { return f64_to_bf16(v); }
  static uint64_t bits(bf16 v) { return v.bits; }
  static double unit(double v) {
    const double a = std::fabs(v);
    if (a < 0x1p-126) return 0x1p-133;
    return std::ldexp(1.0, std::ilogb(a) - 7);
  }
};

// NaN-filled output buffers: every element a kernel forgets stays NaN.
template <class T>
std::vector<T> nan_filled(size_t n) {
  return std::vector<T>(n, Type<T>::encode(std::numeric_limits<double>::quiet_NaN()));
}

// Whether `got` is acceptable for the float64 reference `ref`.
template <class T>
bool close_to(T got, double ref, double magnitude = 0) {
  const double g = Type<T>::decode(got);
  if (std::isnan(ref)) return std::isnan(g);
  if (std::isinf(ref)) return g == ref;
  if (std::isnan(g) || std::isinf(g)) return false;
  const double err = std::fabs(g - ref);
  if constexpr (std::is_same_v<T, double>) {
    return err <= 1e-12 * std::fabs(ref) + 1e-14 + 0x1p-49 * magnitude;
  } else if constexpr (std::is_same_v<T, float>) {
    return err <= 1e-5 * std::fabs(ref) + 1e-6;
  } else {
    return err <= Type<T>::unit(ref) + 0x1p-20 * (magnitude + std::fabs(ref));
  }
}

// Uniform reals with a fixed seed, so failures reproduce.
class Random {
 public:
  explicit Random(uint64_t seed = 20240611) : engine_(seed) {}
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  uint32_t bits32() { return static_cast<uint32_t>(engine_()); }

 private:
  std::mt19937_64 engine_;
};

// Values of type T drawn uniformly from [lo, hi] (rounded to T).
template <class T>
std::vector<T> random_values(Random& rng, size_t n, double lo, double hi) {
  std::vector<T> v(n);
  for (auto& e : v) e = Type<T>::encode(rng.uniform(lo, hi));
  return v;
}

// The shapes every normalization kernel is swept over: channel counts
// 1..67, spatial sizes around the vector widths (tails), N in {1, 2, 3}.
inline const std::vector<size_t>& sweep_spatial_sizes() {
  static const std::vector<size_t> sizes = {1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100};
  return sizes;
}

inline std::vector<NcsShape> full_sweep() {
  std::vector<NcsShape> shapes;
  for (size_t n = 1; n <= 3; ++n) {
    for (size_t c = 1; c <= 67; ++c) {
      for (size_t s : sweep_spatial_sizes()) shapes.push_back({n, c, s});
    }
  }
  return shapes;
}

// A smaller sweep for the comparisons between SIMD levels, plus shapes large
// enough to run on several threads and with non-temporal stores.
inline std::vector<NcsShape> level_sweep() {
  std::vector<NcsShape> shapes;
  for (size_t c : {1, 3, 16, 67}) {
    for (size_t s : sweep_spatial_sizes()) shapes.push_back({2, c, s});
  }
  shapes.push_back({3, 5, 20000});
  shapes.push_back({2, 3, 4097});
  shapes.push_back({700, 67, 1});
  shapes.push_back({2, 33, 1000});
  return shapes;
}

// The one of four (a kernel's entry points, say) for storage type T.
template <class T, class F32, class F64, class F16, class BF16>
constexpr auto by_type(F32 f32, F64 f64, F16 f16_, BF16 bf16_) {
  if constexpr (std::is_same_v<T, float>) return f32;
  else if constexpr (std::is_same_v<T, double>) return f64;
  else if constexpr (std::is_same_v<T, f16>) return f16_;
  else return bf16_;
}

// Bit patterns of outputs, to compare runs bit for bit.
template <class T>
std::vector<uint64_t> bits_of_all(const std::vector<T>& y) {
  std::vector<uint64_t> bits(y.size());
  for (size_t i = 0; i < y.size(); ++i) bits[i] = Type<T>::bits(y[i]);
  return bits;
}

// Runs `run` (returning the bits of its outputs, bits_of_all) at every SIMD
// level, on 1 and 2 threads, with and without non-temporal stores, with
// the AMD Zen 5 tunings (isa.h's rows_fusion_active() and
// chunk_prefetch_out_of_cache_active()) on and off, and checks that every
// run gives the bits of the first; `what` names the case.
template <class Run>
void check_same_bits_everywhere(Run&& run, const std::string& what) {
  SettingsGuard guard;
  const int threads = omp_get_max_threads();
  std::vector<uint64_t> first;
  for (Isa isa : available_isas()) {
    for (int t : {1, 2}) {
      for (size_t threshold : {size_t{0}, size_t{1}}) {  // 1: non-temporal stores where a kernel has them
        for (bool zen5 : {false, true}) {
          set_active_isa(isa);
          set_streaming_threshold_bytes(threshold);
          set_rows_fusion(zen5);
          set_chunk_prefetch_out_of_cache(zen5);
          omp_set_num_threads(t);
          const std::vector<uint64_t> bits = run();
          if (first.empty()) first = bits;
          INFO(what << " at " << isa_name(isa) << ", " << t << " threads, streaming " << (threshold == 1)
                    << ", Zen 5 tunings " << zen5);
          CHECK(bits == first);
        }
      }
    }
  }
  omp_set_num_threads(threads);
}

// "float N=2 C=3 S=17"
template <class T>
std::string describe(const NcsShape& s) {
  std::ostringstream out;
  out << Type<T>::name << " N=" << s.n << " C=" << s.c << " S=" << s.s;
  return out.str();
}

// Case<T>(shape, rng).mismatches(in_place) == 0 over full_sweep(), out of
// place and in place, for every storage type.
template <template <class> class Case, class T>
void sweep_against_reference() {
  Random rng;
  for (const NcsShape& s : full_sweep()) {
    for (bool in_place : {false, true}) {
      const Case<T> c(s, rng);
      INFO(describe<T>(s) << " in place " << in_place);
      REQUIRE(c.mismatches(in_place) == 0);
    }
  }
}
template <template <class> class Case>
void sweep_every_type_against_reference() {
  sweep_against_reference<Case, float>();
  sweep_against_reference<Case, double>();
  sweep_against_reference<Case, f16>();
  sweep_against_reference<Case, bf16>();
}

// The inputs of a normalization with per-channel scale and bias: X uniform
// in [lo, hi], scale in [-2, 2], B in [-1, 1], epsilon 1e-5.
template <class T>
struct ScaledInputs {
  using P = typename Type<T>::Compute;
  NcsShape shape;
  std::vector<T> x;
  std::vector<P> scale, bias;
  P epsilon = P(1e-5);

  ScaledInputs(NcsShape s, size_t params, Random& rng, double lo, double hi) : shape(s) {
    x = random_values<T>(rng, s.elements(), lo, hi);
    scale = random_values<P>(rng, params, -2, 2);
    bias = random_values<P>(rng, params, -1, 1);
  }
};

// Mismatches of y against the spec's standardization of x in rows of `len`
// elements (mean and population variance of each row, long double):
// y = scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c], c = channel(at).
template <class T, class P, class Channel>
size_t standardized_mismatches(const std::vector<T>& x, const std::vector<T>& y, size_t rows, size_t len,
                               Channel channel, const std::vector<P>& scale, const std::vector<P>& bias,
                               P epsilon) {
  using LD = long double;
  size_t bad = 0;
  for (size_t r = 0; r < rows; ++r) {
    LD sum = 0, squares = 0;
    for (size_t i = 0; i < len; ++i) sum += Type<T>::decode(x[r * len + i]);
    const LD mean = sum / len;
    for (size_t i = 0; i < len; ++i) {
      const LD d = Type<T>::decode(x[r * len + i]) - mean;
      squares += d * d;
    }
    const LD root = std::sqrt(squares / len + LD(epsilon));
    for (size_t i = 0; i < len; ++i) {
      const size_t at = r * len + i;
      const size_t c = channel(at);
      const LD xv = Type<T>::decode(x[at]);
      const double ref = double(scale[c] * (xv - mean) / root + bias[c]);
      const LD a = scale[c] / root;
      const double magnitude = 2 * double(std::fabs(xv * a) + std::fabs(mean * a) + std::fabs(LD(bias[c])));
      if (!close_to(y[at], ref, magnitude)) {
        if (bad++ == 0) UNSCOPED_INFO("element " << at << ": got " << Type<T>::decode(y[at]) << ", want " << ref);
      }
    }
  }
  return bad;
}

}  // namespace bnorm::kernels::testing
