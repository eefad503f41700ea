// LpNormalization, LRN and MeanVarianceNormalization (strided_norm.h)
// against their spec formulas evaluated in long double, for every storage
// type, over outer/axis/inner sizes around the block size, window sizes
// odd and even, reduced-axis patterns; each output rounded once; zero
// norms, overflowing double sums and IEEE specials.
#include "kernels/strided_norm.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/norm_kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

using testing::Type;
using LD = long double;

template <class T>
size_t lp_mismatches(size_t outer, size_t len, size_t inner, int p, testing::Random& rng, bool in_place) {
  std::vector<T> x = testing::random_values<T>(rng, outer * len * inner, -3, 3);
  if (outer > 1) {
    for (size_t a = 0; a < len; ++a) x[(len + a) * inner] = Type<T>::encode(0);  // a zero norm at (1, 0)
  }
  std::vector<T> y = in_place ? x : testing::nan_filled<T>(x.size());
  lp_normalize(in_place ? y.data() : x.data(), y.data(), outer, len, inner, p);
  size_t bad = 0;
  for (size_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < inner; ++k) {
      LD norm = 0;
      for (size_t a = 0; a < len; ++a) {
        const LD v = Type<T>::decode(x[(o * len + a) * inner + k]);
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (size_t a = 0; a < len; ++a) {
        const size_t at = (o * len + a) * inner + k;
        const LD ref = norm == 0 ? 0 : Type<T>::decode(x[at]) / norm;
        if (!testing::rounded_once(y[at], ref, 1.0)) {
          if (bad++ == 0) UNSCOPED_INFO("element " << at << ": got " << Type<T>::decode(y[at]) << ", want " << double(ref));
        }
      }
    }
  }
  return bad;
}

template <class T>
void lp_sweep() {
  testing::Random rng;
  for (size_t outer : {1, 2, 3}) {
    for (size_t len : {1, 2, 5, 33}) {
      for (size_t inner : {1, 3, 255, 256, 257, 600}) {
        for (int p : {1, 2}) {
          INFO(Type<T>::name << " outer=" << outer << " len=" << len << " inner=" << inner << " p=" << p);
          CHECK(lp_mismatches<T>(outer, len, inner, p, rng, inner == 3) == 0);
        }
      }
    }
  }
}

TEST_CASE("LpNormalization matches x / ||x||_p along the axis, 0 where the norm is 0", "[kernels][normfamily]") {
  lp_sweep<float>();
  lp_sweep<double>();
  lp_sweep<f16>();
  lp_sweep<bf16>();
}

TEST_CASE("LpNormalization of double data whose sum of squares overflows is still exact", "[kernels][normfamily]") {
  const std::vector<double> x = {3e200, 4e200, -1e-300};
  std::vector<double> y(3);
  lp_normalize(x.data(), y.data(), 1, 3, 1, 2);
  CHECK(y[0] == Approx(0.6).epsilon(1e-15));
  CHECK(y[1] == Approx(0.8).epsilon(1e-15));
  const std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN(), 1.0};
  lp_normalize(nan.data(), y.data(), 1, 2, 1, 1);
  CHECK(std::isnan(y[0]));
  CHECK(std::isnan(y[1]));
}

template <class T>
size_t lrn_mismatches(NcsShape s, const LrnParams& p, testing::Random& rng) {
  const std::vector<T> x = testing::random_values<T>(rng, s.elements(), -3, 3);
  std::vector<T> y = testing::nan_filled<T>(x.size());
  lrn(x.data(), y.data(), s, p);
  size_t bad = 0;
  for (size_t n = 0; n < s.n; ++n) {
    for (size_t c = 0; c < s.c; ++c) {
      const long lo = std::max<long>(0, long(c) - long((p.size - 1) / 2));
      const long hi = std::min<long>(long(s.c) - 1, long(c) + long(p.size / 2));
      for (size_t k = 0; k < s.s; ++k) {
        LD sq = 0;
        for (long i = lo; i <= hi; ++i) {
          const LD v = Type<T>::decode(x[(n * s.c + size_t(i)) * s.s + k]);
          sq += v * v;
        }
        const size_t at = (n * s.c + c) * s.s + k;
        const LD ref = Type<T>::decode(x[at]) / std::pow(LD(p.bias) + LD(p.alpha) / p.size * sq, LD(p.beta));
        if (!testing::rounded_once(y[at], ref, 4.0)) {
          if (bad++ == 0) UNSCOPED_INFO("element " << at << ": got " << Type<T>::decode(y[at]) << ", want " << double(ref));
        }
      }
    }
  }
  return bad;
}

template <class T>
void lrn_sweep() {
  testing::Random rng;
  for (NcsShape s : {NcsShape{1, 1, 1}, NcsShape{2, 5, 7}, NcsShape{1, 8, 300}, NcsShape{3, 13, 2}}) {
    for (size_t size : {1, 2, 3, 4, 5, 20}) {
      const LrnParams p{size, 0.5, 0.75, 1.5};
      INFO(Type<T>::name << " N=" << s.n << " C=" << s.c << " S=" << s.s << " size=" << size);
      CHECK(lrn_mismatches<T>(s, p, rng) == 0);
    }
  }
}

TEST_CASE("LRN matches the spec's window sum over channels for odd and even sizes", "[kernels][normfamily]") {
  lrn_sweep<float>();
  lrn_sweep<double>();
  lrn_sweep<f16>();
  lrn_sweep<bf16>();
}

template <class T>
size_t mvn_mismatches(const std::vector<size_t>& dims, const std::vector<bool>& reduced, bool nv,
                      testing::Random& rng, bool in_place) {
  size_t total = 1, groups = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    total *= dims[d];
    if (!reduced[d]) groups *= dims[d];
  }
  const std::vector<T> x = testing::random_values<T>(rng, total, 5, 9);
  std::vector<T> y = in_place ? x : testing::nan_filled<T>(total);
  std::vector<double> work(2 * groups);
  bool flags[kMaxMvnRank] = {};
  for (size_t d = 0; d < dims.size(); ++d) flags[d] = reduced[d];
  mean_variance_normalize(in_place ? y.data() : x.data(), y.data(), dims.data(), flags, dims.size(),
                          {nv, 1e-9}, work.data());
  // The group of each element, by its kept coordinates.
  std::vector<size_t> group(total);
  for (size_t i = 0; i < total; ++i) {
    size_t rest = i, g = 0, scale = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      const size_t coord = rest % dims[d];
      rest /= dims[d];
      if (!reduced[d]) {
        g += coord * scale;
        scale *= dims[d];
      }
    }
    group[i] = g;
  }
  std::vector<LD> sum(groups, 0), sq(groups, 0);
  const LD count = LD(total / groups);
  for (size_t i = 0; i < total; ++i) sum[group[i]] += Type<T>::decode(x[i]);
  for (size_t i = 0; i < total; ++i) {
    const LD d = Type<T>::decode(x[i]) - sum[group[i]] / count;
    sq[group[i]] += d * d;
  }
  size_t bad = 0;
  for (size_t i = 0; i < total; ++i) {
    const LD d = Type<T>::decode(x[i]) - sum[group[i]] / count;
    const LD ref = nv ? d / (std::sqrt(sq[group[i]] / count) + LD(1e-9)) : d;
    if (!testing::rounded_once(y[i], ref, 16.0)) {
      if (bad++ == 0) UNSCOPED_INFO("element " << i << ": got " << Type<T>::decode(y[i]) << ", want " << double(ref));
    }
  }
  return bad;
}

template <class T>
void mvn_sweep() {
  testing::Random rng;
  const std::vector<size_t> dims = {2, 3, 4, 5};
  for (unsigned mask = 0; mask < 16; ++mask) {
    std::vector<bool> reduced(4);
    for (size_t d = 0; d < 4; ++d) reduced[d] = (mask >> d) & 1;
    for (bool nv : {true, false}) {
      INFO(Type<T>::name << " mask=" << mask << " normalize_variance=" << nv);
      CHECK(mvn_mismatches<T>(dims, reduced, nv, rng, mask % 3 == 0) == 0);
    }
  }
  CHECK(mvn_mismatches<T>({}, {}, true, rng, false) == 0);
  CHECK(mvn_mismatches<T>({7000}, {true}, true, rng, false) == 0);
}

TEST_CASE("MeanVarianceNormalization matches the formula for every pattern of reduced axes", "[kernels][normfamily]") {
  mvn_sweep<float>();
  mvn_sweep<double>();
  mvn_sweep<f16>();
  mvn_sweep<bf16>();
}

TEST_CASE("MeanVarianceNormalization of a constant group is 0, of an empty tensor nothing", "[kernels][normfamily]") {
  const std::vector<float> x(6, 2.5f);
  std::vector<float> y(6, 1.0f);
  std::vector<double> work(4);
  const size_t dims[] = {2, 3};
  const bool reduced[] = {false, true};
  mean_variance_normalize(x.data(), y.data(), dims, reduced, 2, {true, 1e-9}, work.data());
  for (float v : y) CHECK(v == 0.0f);
  const size_t empty[] = {0, 3};
  mean_variance_normalize(x.data(), y.data(), empty, reduced, 2, {true, 1e-9}, work.data());
}

}  // namespace
}  // namespace bnorm::kernels
