// float16 and bfloat16 storage types and their conversions.
//
// Decoding (16-bit -> float/double) is exact. Encoding rounds once, to
// nearest with ties to even, directly from the source value: a double is
// not first rounded to float (that would round twice). Overflow gives
// infinity, signs of zeros are kept. A NaN keeps its sign and the leading
// bits of its payload, with the quiet bit set: what F16C (VCVTPS2PH) and
// AVX512-BF16 (VCVTNEPS2BF16) do, and numpy for quiet NaNs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace bnorm::kernels {

struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };

namespace detail {

// Rounds |a| (finite, >= 0) to a binary format with `M` mantissa bits and
// `E` exponent bits; returns the bits without sign.
template <int M, int E>
inline uint32_t encode_magnitude(double a) noexcept {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr int emin = 1 - bias;
  // Smallest value that rounds to infinity: halfway between the largest
  // finite value and 2^(bias+1).
  const double overflow = std::ldexp(2.0 - std::ldexp(1.0, -(M + 1)), bias);
  if (a >= overflow) return ((1u << E) - 1u) << M;
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal (or zero): a multiple of 2^(emin - M); may round up to the
    // smallest normal, whose encoding is the same integer.
    return static_cast<uint32_t>(std::nearbyint(std::ldexp(a, M - emin)));
  }
  int ex = 0;
  const double m = std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1)
  int e = ex - 1;
  auto frac = static_cast<uint32_t>(std::nearbyint(std::ldexp(m * 2.0 - 1.0, M)));
  if (frac == (1u << M)) {
    frac = 0;
    ++e;
  }
  return (static_cast<uint32_t>(e + bias) << M) | frac;
}

template <int M, int E>
inline uint16_t encode(double v) noexcept {
  constexpr uint32_t sign_bit = 1u << (M + E);
  const uint32_t sign = std::signbit(v) ? sign_bit : 0u;
  if (std::isnan(v)) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const auto payload = static_cast<uint32_t>((bits & 0xFFFFFFFFFFFFFull) >> (52 - M));
    return static_cast<uint16_t>(sign | (((1u << E) - 1u) << M) | (1u << (M - 1)) | payload);
  }
  return static_cast<uint16_t>(sign | encode_magnitude<M, E>(std::fabs(v)));
}

}  // namespace detail

inline float f16_to_f32(f16 h) noexcept {
  const uint32_t sign = (h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1Fu;
  const uint32_t man = h.bits & 0x3FFu;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(man), -24);  // zero or subnormal, exact
    return sign ? -out : out;
  }
  uint32_t bits;
  if (exp == 0x1F) bits = sign | 0x7F800000u | (man << 13);
  else bits = sign | ((exp + 112u) << 23) | (man << 13);
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

inline float bf16_to_f32(bf16 h) noexcept {
  const uint32_t bits = static_cast<uint32_t>(h.bits) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

inline f16 f64_to_f16(double v) noexcept { return {detail::encode<10, 5>(v)}; }
inline f16 f32_to_f16(float v) noexcept { return f64_to_f16(v); }  // float -> double is exact
inline bf16 f64_to_bf16(double v) noexcept { return {detail::encode<7, 8>(v)}; }
inline bf16 f32_to_bf16(float v) noexcept { return f64_to_bf16(v); }

}  // namespace bnorm::kernels
