// conv_plane.h at every SIMD level, float and double: input sizes, kernels,
// strides, dilations and paddings (some wider than the kernel, some past
// the input) swept; every output checked bit for bit against the im2col
// matrix times the weights summed in (ky, kx) order with each product fused
// with its sum (std::fma: what im2col + gemm computes), and
// against a long double reference within the error bound of a K-term sum.
// Infinite and NaN weights reach padded positions as W * 0.
#pragma GCC optimize("fp-contract=off")
#include "kernels/conv_plane.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

// X(iy, ix) for signed coordinates; 0 outside.
template <class T>
T at(const std::vector<T>& x, const ConvPlane& s, long iy, long ix) {
  if (iy < 0 || ix < 0 || iy >= static_cast<long>(s.in_h) || ix >= static_cast<long>(s.in_w)) return T(0);
  return x[static_cast<size_t>(iy) * s.in_w + static_cast<size_t>(ix)];
}

template <class T>
void check_plane(const ConvPlane& s, std::mt19937& rng, bool special) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> x(s.in_h * s.in_w), w(s.kernel_h * s.kernel_w);
  for (T& v : x) v = static_cast<T>(u(rng));
  for (T& v : w) v = static_cast<T>(u(rng));
  if (special) w[0] = std::numeric_limits<T>::infinity();
  std::vector<T> y(s.out_h * s.out_w + 1, T(7));
  conv_plane(x.data(), w.data(), y.data(), s);
  REQUIRE(y.back() == T(7));  // nothing written past the plane
  const double unit = std::numeric_limits<T>::epsilon() / 2;
  for (size_t oy = 0; oy < s.out_h; ++oy)
    for (size_t ox = 0; ox < s.out_w; ++ox) {
      T spec = T(0);
      long double ref = 0, mag = 0;  // more exact than the double products checked
      for (size_t ky = 0; ky < s.kernel_h; ++ky)
        for (size_t kx = 0; kx < s.kernel_w; ++kx) {
          const long iy = static_cast<long>(oy * s.stride_h + ky * s.dil_h) - static_cast<long>(s.pad_h);
          const long ix = static_cast<long>(ox * s.stride_w + kx * s.dil_w) - static_cast<long>(s.pad_w);
          spec = std::fma(w[ky * s.kernel_w + kx], at(x, s, iy, ix), spec);
          const long double prod =
              static_cast<long double>(w[ky * s.kernel_w + kx]) * static_cast<long double>(at(x, s, iy, ix));
          ref += prod;
          mag += std::fabs(prod);
        }
      const T got = y[oy * s.out_w + ox];
      INFO("in " << s.in_h << "x" << s.in_w << " kernel " << s.kernel_h << "x" << s.kernel_w << " stride "
                 << s.stride_h << "," << s.stride_w << " dil " << s.dil_h << "," << s.dil_w << " pad " << s.pad_h
                 << "," << s.pad_w << " at " << oy << "," << ox);
      REQUIRE(std::memcmp(&got, &spec, sizeof(T)) == 0);
      if (!special) {
        REQUIRE(std::fabs(static_cast<long double>(got) - ref) <=
                1.01L * static_cast<long double>(s.kernel_h * s.kernel_w) * unit * mag);
      }
    }
}

// Output size as Conv computes it (NOTSET padding, pad at both ends).
size_t out_size(size_t in, size_t k, size_t stride, size_t dil, size_t pad) {
  const size_t span = (k - 1) * dil + 1;
  return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / stride + 1;
}

TEMPLATE_TEST_CASE("conv_plane gives im2col's product bit for bit at every level", "[kernels]", float, double) {
  testing::SettingsGuard guard;
  std::mt19937 rng(11);
  testing::for_each_product_variant([&](const std::string& level) {
    INFO("level " << level);
    for (size_t in_w : {1, 2, 5, 16, 37, 70})
      for (size_t k : {1, 2, 3, 5})
        for (size_t stride : {1, 2, 3})
          for (size_t dil : {1, 2})
            for (size_t pad : {0, 1, 2, 4}) {
              ConvPlane s{3, in_w, k, k, 0, 0, stride, stride, dil, dil, pad, pad};
              if (k == 2) s.kernel_h = 3;  // a kernel that is not square
              s.out_h = out_size(s.in_h, s.kernel_h, stride, dil, pad);
              s.out_w = out_size(in_w, k, stride, dil, pad);
              if (s.out_h == 0 || s.out_w == 0) continue;
              check_plane<TestType>(s, rng, false);
              check_plane<TestType>(s, rng, true);
            }
  });
}

TEST_CASE("conv_plane with strides that differ between rows and columns, and a tall kernel", "[kernels]") {
  testing::SettingsGuard guard;
  std::mt19937 rng(5);
  testing::for_each_product_variant([&](const std::string& level) {
    INFO("level " << level);
    ConvPlane s{9, 20, 3, 3, 0, 0, 2, 1, 1, 3, 1, 0};
    s.out_h = out_size(9, 3, 2, 1, 1);
    s.out_w = out_size(20, 3, 1, 3, 0);
    check_plane<float>(s, rng, false);
    // Kernels taller than the row pointers of the stride-1 path (16).
    ConvPlane tall{20, 40, 18, 3, 0, 0, 1, 1, 1, 1, 2, 1};
    tall.out_h = out_size(20, 18, 1, 1, 2);
    tall.out_w = out_size(40, 3, 1, 1, 1);
    check_plane<float>(tall, rng, false);
    check_plane<double>(tall, rng, true);
  });
}


TEST_CASE("conv_plane's 3x3 path over planes of several bands and rows of every width", "[kernels]") {
  // The 3 x 3 kernel at stride 1 and 2 copies bands of input rows (48 KiB)
  // into a zero border: planes taller than one band, rows around each
  // vector width, paddings 0 to 2 (2 reads one column of padding more than
  // the kernel spans).
  testing::SettingsGuard guard;
  std::mt19937 rng(23);
  testing::for_each_product_variant([&](const std::string& level) {
    INFO("level " << level);
    for (size_t stride : {1, 2})
      for (size_t pad : {0, 1, 2}) {
        for (size_t in_w : {3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65})
          for (size_t in_h : {3, 10}) {
            ConvPlane s{in_h, in_w, 3, 3, 0, 0, stride, stride, 1, 1, pad, pad};
            s.out_h = out_size(in_h, 3, stride, 1, pad);
            s.out_w = out_size(in_w, 3, stride, 1, pad);
            if (s.out_h == 0 || s.out_w == 0) continue;
            check_plane<float>(s, rng, false);
            check_plane<double>(s, rng, pad > 0);
          }
        for (size_t in_w : {700, 2100}) {  // bands of a few rows; 2100 doubles: three rows fill no band
          ConvPlane s{60, in_w, 3, 3, 0, 0, stride, stride, 1, 1, pad, pad};
          s.out_h = out_size(60, 3, stride, 1, pad);
          s.out_w = out_size(in_w, 3, stride, 1, pad);
          check_plane<float>(s, rng, false);
          check_plane<double>(s, rng, false);
        }
      }
  });
}

}  // namespace
}  // namespace bnorm::kernels
