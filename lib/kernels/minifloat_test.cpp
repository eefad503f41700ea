// float8 / float4 conversions: every bit pattern against the formats'
// definitions, round trips, and ties to even between neighbours.
#include "kernels/minifloat.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace {

using bnorm::kernels::f64_to_minifloat;
using bnorm::kernels::Minifloat;
using bnorm::kernels::minifloat_max;
using bnorm::kernels::minifloat_to_f64;

struct Spec {
  Minifloat f;
  int exp, man, bias;
  int codes;  // 256 or 16
  double max;
};

const Spec kSpecs[] = {
    {Minifloat::e4m3fn, 4, 3, 7, 256, 448},       {Minifloat::e4m3fnuz, 4, 3, 8, 256, 240},
    {Minifloat::e5m2, 5, 2, 15, 256, 57344},      {Minifloat::e5m2fnuz, 5, 2, 16, 256, 57344},
    {Minifloat::e2m1, 2, 1, 1, 16, 6},
};

bool is_nan_code(const Spec& s, int c) {
  switch (s.f) {
    case Minifloat::e4m3fn: return (c & 0x7F) == 0x7F;
    case Minifloat::e4m3fnuz:
    case Minifloat::e5m2fnuz: return c == 0x80;
    case Minifloat::e5m2: return (c & 0x7F) > 0x7C;
    case Minifloat::e2m1: return false;
  }
  return false;
}

// (-1)^s 2^(e - bias) (1 + m / 2^M), or 2^(1 - bias) m / 2^M when e = 0.
double reference(const Spec& s, int c) {
  const int sign_bit = 1 << (s.exp + s.man);
  const int e = (c & (sign_bit - 1)) >> s.man;
  const int m = c & ((1 << s.man) - 1);
  const double mag = e == 0 ? std::ldexp(m, 1 - s.bias - s.man) : std::ldexp(1.0 + std::ldexp(m, -s.man), e - s.bias);
  return (c & sign_bit) ? -mag : mag;
}

}  // namespace

TEST_CASE("Every float8 and float4 bit pattern decodes to its format's value", "[kernels][minifloat]") {
  for (const auto& s : kSpecs) {
    CHECK(minifloat_max(s.f) == s.max);
    for (int c = 0; c < s.codes; ++c) {
      const double v = minifloat_to_f64(static_cast<uint8_t>(c), s.f);
      if (is_nan_code(s, c)) {
        CHECK(std::isnan(v));
      } else if (s.f == Minifloat::e5m2 && (c & 0x7F) == 0x7C) {
        CHECK(v == ((c & 0x80) ? -INFINITY : INFINITY));
      } else {
        CHECK(v == reference(s, c));
      }
    }
  }
}

TEST_CASE("Encoding a decoded value gives its bit pattern back, midpoints round to the even neighbour",
          "[kernels][minifloat]") {
  for (const auto& s : kSpecs) {
    const int sign_bit = 1 << (s.exp + s.man);
    std::vector<int> finite;  // positive finite codes in increasing order
    for (int c = 0; c < sign_bit; ++c) {
      if (!is_nan_code(s, c) && !(s.f == Minifloat::e5m2 && c >= 0x7C)) finite.push_back(c);
    }
    for (int c : finite) {
      const double v = reference(s, c);
      CHECK(f64_to_minifloat(v, s.f, false) == c);
      const bool uz = s.f == Minifloat::e4m3fnuz || s.f == Minifloat::e5m2fnuz;
      const int neg = c == 0 && uz ? 0 : c | sign_bit;
      CHECK(f64_to_minifloat(-v, s.f, true) == neg);
    }
    for (size_t i = 0; i + 1 < finite.size(); ++i) {
      const double lo = reference(s, finite[i]), hi = reference(s, finite[i + 1]);
      const int even = finite[i] % 2 == 0 ? finite[i] : finite[i + 1];
      CHECK(f64_to_minifloat((lo + hi) / 2, s.f, true) == even);
      CHECK(f64_to_minifloat(std::nextafter((lo + hi) / 2, 0.0), s.f, true) == finite[i]);
      CHECK(f64_to_minifloat(std::nextafter((lo + hi) / 2, 1e9), s.f, true) == finite[i + 1]);
    }
  }
}

TEST_CASE("Out of range values saturate, or become infinity or NaN without saturate", "[kernels][minifloat]") {
  for (const auto& s : kSpecs) {
    const int max_code = f64_to_minifloat(s.max, s.f, true);
    CHECK(f64_to_minifloat(s.max * 4, s.f, true) == max_code);
    CHECK(f64_to_minifloat(INFINITY, s.f, true) == max_code);
    const double past = minifloat_to_f64(f64_to_minifloat(s.max * 4, s.f, false), s.f);
    if (s.f == Minifloat::e5m2) CHECK(past == INFINITY);
    else if (s.f == Minifloat::e2m1) CHECK(past == 6);
    else CHECK(std::isnan(past));
  }
}
