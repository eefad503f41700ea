// gemm.h at every SIMD level, float and double: sizes sweeping every tail
// of the tiles (rows past a multiple of 8, 6 and 4; columns past a multiple
// of every panel width) and depths past one panel of B (KC rows: 128 to
// 512 by level and type), with leading dimensions wider than the matrices.
// Checked two ways: against a long double reference within the error bound of
// a K-term float sum, |got - ref| <= 1.01 K u sum |a||b| (u the unit
// roundoff of T), and bit for bit against the plain i-k-j loop that gemm.h
// specifies (std::fma of each product with the sum, in p order), which
// the kernel must reproduce at every level, width and thread count.
#pragma GCC optimize("fp-contract=off")
#include "kernels/gemm.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

struct Case {
  size_t m, n, k;
};

template <class T>
struct Operands {
  size_t lda, ldb, ldc;
  std::vector<T> a, b, c;
};

template <class T>
Operands<T> operands(const Case& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Operands<T> o{s.k + 3, s.n + 5, s.n + 2, {}, {}, {}};
  o.a.resize(s.m * o.lda);
  o.b.resize(s.k * o.ldb);
  o.c.resize(s.m * o.ldc);
  for (T& v : o.a) v = static_cast<T>(u(rng));
  for (T& v : o.b) v = static_cast<T>(u(rng));
  for (T& v : o.c) v = static_cast<T>(u(rng));
  return o;
}

// The specification: C[i, j] = fma(A[i, p], B[p, j], C[i, j]), p = 0..K-1,
// each product and its sum rounded once to T.
template <class T>
std::vector<T> plain(const Operands<T>& o, const Case& s, bool accumulate) {
  std::vector<T> c = o.c;
  for (size_t i = 0; i < s.m; ++i)
    for (size_t j = 0; j < s.n; ++j) {
      T sum = accumulate ? c[i * o.ldc + j] : T(0);
      for (size_t p = 0; p < s.k; ++p) {
        sum = std::fma(o.a[i * o.lda + p], o.b[p * o.ldb + j], sum);
      }
      c[i * o.ldc + j] = sum;
    }
  return c;
}

template <class T>
void check_case(const Case& s, std::mt19937& rng, bool accumulate) {
  const Operands<T> o = operands<T>(s, rng);
  std::vector<T> got = o.c;
  gemm(o.a.data(), o.lda, o.b.data(), o.ldb, got.data(), o.ldc, s.m, s.n, s.k, accumulate);
  const std::vector<T> spec = plain(o, s, accumulate);
  const double unit = std::numeric_limits<T>::epsilon() / 2;
  for (size_t i = 0; i < s.m; ++i)
    for (size_t j = 0; j < o.ldc; ++j) {
      const size_t at = i * o.ldc + j;
      INFO("m " << s.m << " n " << s.n << " k " << s.k << " at " << i << "," << j << " accumulate " << accumulate);
      if (j >= s.n) {  // past N: untouched
        REQUIRE(std::memcmp(&got[at], &o.c[at], sizeof(T)) == 0);
        continue;
      }
      // long double (x87's 64-bit significand): a reference more exact than
      // the double products it checks.
      long double ref = accumulate ? static_cast<long double>(o.c[at]) : 0.0L, mag = std::fabs(ref);
      for (size_t p = 0; p < s.k; ++p) {
        const long double prod =
            static_cast<long double>(o.a[i * o.lda + p]) * static_cast<long double>(o.b[p * o.ldb + j]);
        ref += prod;
        mag += std::fabs(prod);
      }
      REQUIRE(std::fabs(static_cast<long double>(got[at]) - ref) <=
              1.01L * static_cast<long double>(s.k + 1) * unit * mag);
      REQUIRE(std::memcmp(&got[at], &spec[at], sizeof(T)) == 0);
    }
}

std::vector<Case> sweep() {
  std::vector<Case> cases;
  for (size_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 17, 23, 27})
    for (size_t n : {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65})
      for (size_t k : {1, 2, 5, 16}) cases.push_back({m, n, k});
  for (size_t k : {127, 128, 129, 255, 256, 257, 511, 512, 513, 700}) cases.push_back({7, 37, k});
  cases.push_back({24, 130, 300});
  return cases;
}

TEMPLATE_TEST_CASE("gemm sums every element in k order and within the float error bound at every level", "[kernels]",
                   float, double) {
  testing::SettingsGuard guard;
  std::mt19937 rng(7);
  testing::for_each_product_variant([&](const std::string& level) {
    INFO("level " << level);
    for (const Case& s : sweep()) {
      check_case<TestType>(s, rng, false);
      check_case<TestType>(s, rng, true);
    }
  });
}

TEST_CASE("gemm gives the same bits on one thread and on several", "[kernels]") {
  testing::SettingsGuard guard;
  std::mt19937 rng(3);
  // Above the parallel threshold: columns split mid-panel; then few columns
  // and many rows, split by rows (tails of 24-row parts and of tiles).
  for (const Case& s : {Case{37, 1000, 300}, Case{101, 70, 700}}) {
    const Operands<float> o = operands<float>(s, rng);
    const int before = omp_get_max_threads();
    std::vector<float> one = o.c, many = o.c;
    omp_set_num_threads(1);
    gemm(o.a.data(), o.lda, o.b.data(), o.ldb, one.data(), o.ldc, s.m, s.n, s.k, false);
    omp_set_num_threads(3);
    gemm(o.a.data(), o.lda, o.b.data(), o.ldb, many.data(), o.ldc, s.m, s.n, s.k, false);
    omp_set_num_threads(before);
    INFO("m " << s.m << " n " << s.n << " k " << s.k);
    REQUIRE(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
    REQUIRE(std::memcmp(one.data(), plain(o, s, false).data(), one.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("gemm with k = 0 writes zeros, or leaves C when accumulating, NaN and infinity propagate", "[kernels]") {
  testing::SettingsGuard guard;
  testing::for_each_product_variant([&](const std::string& level) {
    INFO("level " << level);
    std::vector<float> c(6, 5.0f);
    gemm(static_cast<const float*>(nullptr), 0, nullptr, 3, c.data(), 3, 2, 3, 0, true);
    REQUIRE(c == std::vector<float>(6, 5.0f));
    gemm(static_cast<const float*>(nullptr), 0, nullptr, 3, c.data(), 3, 2, 3, 0, false);
    REQUIRE(c == std::vector<float>(6, 0.0f));
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> a{1, 0, inf, 1}, b{inf, 1, 2, 3};  // [2, 2] x [2, 2]
    std::vector<float> y(4);
    gemm(a.data(), 2, b.data(), 2, y.data(), 2, 2, 2, 2, false);
    REQUIRE(std::isinf(y[0]));  // 1*inf + 0*2
    REQUIRE(y[1] == 1.0f);
    REQUIRE(std::isinf(y[2]));  // inf*inf + 1*2
    REQUIRE(std::isinf(y[3]));  // inf*1 + 1*3
    const std::vector<float> z{0, 1, nan, 0};
    gemm(z.data(), 2, b.data(), 2, y.data(), 2, 2, 2, 2, false);
    REQUIRE(std::isnan(y[0]));  // 0*inf
    REQUIRE(std::isnan(y[2]));
  });
}


// gemm_packed: B = W^T packed once (W [n, k]), the rows of B taken in
// chunks of whole blocks from p0 (each chunk accumulating): bit for bit
// the plain loop over the whole depth.
template <class T>
void check_packed(const Case& s, size_t blocks, std::mt19937& rng, bool accumulate) {
  const Operands<T> o = operands<T>(s, rng);
  const size_t ldw = s.k + 2;
  std::vector<T> w(s.n * ldw, T(9));
  for (size_t j = 0; j < s.n; ++j)
    for (size_t p = 0; p < s.k; ++p) w[j * ldw + p] = o.b[p * o.ldb + j];
  std::vector<T> packed(gemm_packed_size(static_cast<const T*>(nullptr), s.k, s.n) + 1, T(7));
  gemm_pack_transposed(w.data(), ldw, s.k, s.n, packed.data());
  REQUIRE(packed.back() == T(7));  // nothing written past the packing
  const GemmPacked<T> b{packed.data(), s.k, s.n};
  const size_t chunk = blocks * gemm_packed_depth(static_cast<const T*>(nullptr));
  std::vector<T> got = o.c;
  size_t p0 = 0;
  do {
    const size_t p1 = std::min(s.k, p0 + chunk);
    gemm_packed(o.a.data() + p0, o.lda, b, p0, got.data(), o.ldc, s.m, p1 - p0, accumulate || p0 > 0);
    p0 = p1;
  } while (p0 < s.k);
  const std::vector<T> spec = plain(o, s, accumulate);
  INFO("m " << s.m << " n " << s.n << " k " << s.k << " chunk " << chunk << " accumulate " << accumulate);
  REQUIRE(std::memcmp(got.data(), spec.data(), got.size() * sizeof(T)) == 0);
}

TEMPLATE_TEST_CASE("gemm_packed with the weights packed once gives gemm's bits at every level", "[kernels]", float,
                   double) {
  testing::SettingsGuard guard;
  std::mt19937 rng(17);
  testing::for_each_product_variant([&](const std::string& level) {
    INFO("level " << level);
    for (const Case& s : sweep()) {
      check_packed<TestType>(s, 100, rng, false);
      check_packed<TestType>(s, 100, rng, true);
    }
    for (size_t blocks : {1, 2}) check_packed<TestType>({49, 70, 1100}, blocks, rng, false);
    check_packed<TestType>({49, 600, 513}, 1, rng, false);  // columns past one stripe of panels
  });
}

TEST_CASE("gemm_packed gives the same bits on one thread and on several", "[kernels]") {
  testing::SettingsGuard guard;
  std::mt19937 rng(4);
  const int before = omp_get_max_threads();
  for (const Case& s : {Case{37, 1000, 300}, Case{101, 70, 700}}) {
    omp_set_num_threads(3);
    check_packed<float>(s, 2, rng, false);
    omp_set_num_threads(before);
  }
}

}  // namespace
}  // namespace bnorm::kernels
