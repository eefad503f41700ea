// Helpers of the normalization-family kernel tests (layer_norm_test.cpp,
// group_norm_test.cpp, strided_norm_test.cpp), beside kernel_test_support.hpp.
#pragma once

#include <cmath>
#include <type_traits>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels::testing {

// Whether `got` is `ref` (a long double reference from the spec formula)
// rounded once to T: within half a unit of T at ref, plus the float64
// evaluation's own error, 2^-48 * magnitude (the size of the terms summed).
// float64 outputs: close_to's tolerance.
template <class T>
bool rounded_once(T got, long double ref, double magnitude) {
  const auto r = static_cast<double>(ref);
  if constexpr (std::is_same_v<T, double>) {
    return close_to(got, r, magnitude);
  } else {
    const double g = Type<T>::decode(got);
    if (std::isnan(r)) return std::isnan(g);
    if (std::isinf(r)) return g == r;
    if (std::isnan(g)) return false;
    double unit = 0;
    if constexpr (std::is_same_v<T, float>) {
      unit = std::fabs(r) < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(r) - 23);
    } else {
      unit = Type<T>::unit(r);
    }
    return std::fabs(g - r) <= 0.5 * unit * (1 + 1e-9) + 0x1p-48 * magnitude;
  }
}

}  // namespace bnorm::kernels::testing
