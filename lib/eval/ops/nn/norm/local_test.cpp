// MeanVarianceNormalization (1, 9, 13), LpNormalization (1, 22), LRN (1,
// 13) and InstanceNormalization-22 through bnorm::evaluate, against float64
// references written here from the ONNX spec, with their attributes, types
// by version, edge cases and invalid nodes.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "core/error.h"
#include "support/norm_family_test_util.h"

using namespace normfamily_test;

namespace {

// (x - mean) / (sqrt(var) + 1e-9) over the reduced axes of a [2, 3, 2, 2] X.
std::vector<double> mvn_ref(const std::vector<double>& x, const std::vector<bool>& reduced, bool nv = true) {
  const size_t dims[4] = {2, 3, 2, 2};
  auto key = [&](size_t i) {
    size_t k = 0;
    for (size_t d = 4, rest = i; d-- > 0; rest /= dims[d]) k = k * 10 + (reduced[d] ? 0 : rest % dims[d] + 1);
    return k;
  };
  std::map<size_t, double> sum, sq, count;
  for (size_t i = 0; i < x.size(); ++i) {
    sum[key(i)] += x[i];
    count[key(i)] += 1;
  }
  for (size_t i = 0; i < x.size(); ++i) sq[key(i)] += std::pow(x[i] - sum[key(i)] / count[key(i)], 2);
  std::vector<double> y;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - sum[key(i)] / count[key(i)];
    y.push_back(nv ? d / (std::sqrt(sq[key(i)] / count[key(i)]) + 1e-9) : d);
  }
  return y;
}

}  // namespace

TEST_CASE("MeanVarianceNormalization 9 and 13 reduce over `axes` (default 0, 2, 3)", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float32, {2, 3, 2, 2}, random(24, -3, 3));
  const Tensor xt = tensor(DType::float32, {2, 3, 2, 2}, x);
  for (int opset : {9, 13}) {
    check_close(run("MeanVarianceNormalization", opset, {{"X", xt}}, {"Y"}).at("Y"), mvn_ref(x, {true, false, true, true}));
    check_close(run("MeanVarianceNormalization", opset, {{"X", xt}}, {"Y"},
                    [](onnx::NodeProto& n) { set_ints(n, "axes", {-1, 1}); })
                    .at("Y"),
                mvn_ref(x, {false, true, false, true}));
  }
  const Tensor xb = tensor(DType::bfloat16, {2, 3, 2, 2}, x);
  check_close(run("MeanVarianceNormalization", 13, {{"X", xb}}, {"Y"}).at("Y"),
              mvn_ref(xb.to_f64(), {true, false, true, true}));
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 9, {{"X", xb}}, {"Y"}), bnorm::Error);  // bf16 from 13
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 13, {{"X", xt}}, {"Y"},
                        [](onnx::NodeProto& n) { set_ints(n, "axes", {1, -3}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 13, {{"X", xt}}, {"Y"},
                        [](onnx::NodeProto& n) { set_ints(n, "axes", {4}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 13, {{"X", tensor(DType::float32, {2, 3}, random(6, 0, 1))}}, {"Y"}),
                    bnorm::Error);  // default axis 3 does not exist
}

TEST_CASE("MeanVarianceNormalization-1 reduces per channel or across channels, with or without the variance",
          "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float64, {2, 3, 2, 2}, random(24, -3, 3));
  const Tensor xt = tensor(DType::float64, {2, 3, 2, 2}, x);
  check_close(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"}).at("Y"), mvn_ref(x, {false, false, true, true}));
  check_close(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"},
                  [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "across_channels", int64_t{1}); })
                  .at("Y"),
              mvn_ref(x, {false, true, true, true}));
  check_close(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"},
                  [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "normalize_variance", int64_t{0}); })
                  .at("Y"),
              mvn_ref(x, {false, false, true, true}, false));
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"},
                        [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "across_channels", int64_t{2}); }),
                    bnorm::Error);
}

namespace {

std::vector<double> lp_ref(const std::vector<double>& x, size_t outer, size_t len, size_t inner, int p) {
  std::vector<double> y(x.size());
  for (size_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < inner; ++k) {
      double norm = 0;
      for (size_t a = 0; a < len; ++a) norm += p == 1 ? std::fabs(x[(o * len + a) * inner + k]) : std::pow(x[(o * len + a) * inner + k], 2);
      if (p == 2) norm = std::sqrt(norm);
      for (size_t a = 0; a < len; ++a) y[(o * len + a) * inner + k] = norm == 0 ? 0 : x[(o * len + a) * inner + k] / norm;
    }
  }
  return y;
}

}  // namespace

TEST_CASE("LpNormalization divides by the 1- or 2-norm along axis, giving 0 for a zero norm", "[eval][normfamily]") {
  std::vector<double> x = held(DType::float32, {2, 3, 4}, random(24, -3, 3));
  for (size_t a = 0; a < 3; ++a) x[4 * a + 1] = 0;  // a zero norm along axis 1 at (0, :, 1)
  const Tensor xt = tensor(DType::float32, {2, 3, 4}, x);
  check_close(run("LpNormalization", 1, {{"x", xt}}, {"Y"}).at("Y"), lp_ref(x, 6, 4, 1, 2));
  const std::vector<double> y = run("LpNormalization", 22, {{"x", xt}}, {"Y"}, [](onnx::NodeProto& n) {
                                  bnorm::test::set_attr(n, "axis", int64_t{1});
                                  bnorm::test::set_attr(n, "p", int64_t{1});
                                }).at("Y").to_f64();
  check_close(tensor(DType::float64, {24}, y), lp_ref(x, 2, 3, 4, 1));
  CHECK(y[1] == 0);
  const Tensor xb = tensor(DType::bfloat16, {2, 3, 4}, x);
  check_close(run("LpNormalization", 22, {{"x", xb}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", int64_t{-3}); }).at("Y"),
              lp_ref(xb.to_f64(), 1, 2, 12, 2));
  REQUIRE_THROWS_AS(run("LpNormalization", 1, {{"x", xb}}, {"Y"}), bnorm::Error);  // bf16 from 22
  REQUIRE_THROWS_AS(run("LpNormalization", 22, {{"x", xt}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "p", int64_t{3}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("LpNormalization", 22, {{"x", xt}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", int64_t{3}); }),
                    bnorm::Error);
}

namespace {

std::vector<double> lrn_ref(const std::vector<double>& x, size_t n, size_t c, size_t s, int64_t size, double alpha,
                            double beta, double bias) {
  std::vector<double> y;
  for (size_t i = 0; i < n * c * s; ++i) {
    const auto ch = static_cast<int64_t>(i / s % c);
    double sq = 0;
    for (int64_t k = std::max<int64_t>(0, ch - (size - 1) / 2); k <= std::min<int64_t>(c - 1, ch + size / 2); ++k) {
      sq += std::pow(x[(i / s / c * c + static_cast<size_t>(k)) * s + i % s], 2);
    }
    y.push_back(x[i] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
  }
  return y;
}

}  // namespace

TEST_CASE("LRN sums squares over a window of channels, odd or even in size", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float32, {2, 5, 3}, random(30, -3, 3));
  const Tensor xt = tensor(DType::float32, {2, 5, 3}, x);
  for (int64_t size : {1, 2, 3, 4}) {
    INFO("size " << size);
    check_close(run("LRN", 13, {{"X", xt}}, {"Y"}, [size](onnx::NodeProto& n) { bnorm::test::set_attr(n, "size", size); }).at("Y"),
                lrn_ref(x, 2, 5, 3, size, double{1e-4f}, 0.75, 1.0));
  }
  auto attrs = [](onnx::NodeProto& n) {
    bnorm::test::set_attr(n, "size", int64_t{3});
    bnorm::test::set_attr(n, "alpha", 0.5f);
    bnorm::test::set_attr(n, "beta", 0.5f);
    bnorm::test::set_attr(n, "bias", 2.0f);
  };
  check_close(run("LRN", 1, {{"X", tensor(DType::float64, {2, 5, 3}, x)}}, {"Y"}, attrs).at("Y"), lrn_ref(x, 2, 5, 3, 3, 0.5, 0.5, 2));
  const Tensor xb = tensor(DType::bfloat16, {2, 5, 3}, x);
  check_close(run("LRN", 13, {{"X", xb}}, {"Y"}, attrs).at("Y"), lrn_ref(xb.to_f64(), 2, 5, 3, 3, 0.5, 0.5, 2));
  REQUIRE_THROWS_AS(run("LRN", 1, {{"X", xb}}, {"Y"}, attrs), bnorm::Error);  // bf16 from 13
  REQUIRE_THROWS_AS(run("LRN", 13, {{"X", xt}}, {"Y"}), bnorm::Error);         // size is required
  REQUIRE_THROWS_AS(run("LRN", 13, {{"X", xt}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "size", int64_t{0}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("LRN", 13, {{"X", tensor(DType::float32, {3}, {1, 2, 3})}}, {"Y"}, attrs), bnorm::Error);
}

TEST_CASE("InstanceNormalization-22 normalizes bfloat16 data", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::bfloat16, {2, 3, 4}, random(24, -3, 3));
  const std::vector<double> s = held(DType::bfloat16, {3}, {1, -2, 0.5}), b = held(DType::bfloat16, {3}, {0, 1, -1});
  auto out = run("InstanceNormalization", 22,
                 {{"x", tensor(DType::bfloat16, {2, 3, 4}, x)}, {"s", tensor(DType::bfloat16, {3}, s)}, {"b", tensor(DType::bfloat16, {3}, b)}},
                 {"Y"});
  CHECK(out.at("Y").dtype == DType::bfloat16);
  check_close(out.at("Y"), group_norm_ref(x, 2, 3, 3, s, b, kEps));
}
