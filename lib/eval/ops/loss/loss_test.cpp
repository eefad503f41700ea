// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the spec's worked
// examples and a log-softmax evaluated here in float64.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

Tensor doubles(std::vector<int64_t> dims, const std::vector<double>& v, DType t = DType::float64) {
  return Tensor::from_f64(t, std::move(dims), v);
}

Attrs reduction(const std::string& r, const Attrs& more = {}) {
  return [r, more](onnx::NodeProto& n) {
    set_string(n, "reduction", r);
    if (more) more(n);
  };
}

Attrs ignore(int64_t i) {
  return [i](onnx::NodeProto& n) { set_attr(n, "ignore_index", i); };
}

// The spec's examples: N, C, d1 = 2, 3, 2.
const Tensor kInput = doubles({2, 3, 2}, {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2});
const Tensor kTarget = i64({2, 2}, {2, 1, 0, 2});
const Tensor kWeight = doubles({3}, {0.2, 0.3, 0.1});

}  // namespace

TEST_CASE("NegativeLogLikelihoodLoss gives the spec's examples for none, sum and mean", "[eval][misc]") {
  const Tensor none = run_node1(13, "NegativeLogLikelihoodLoss", {kInput, kTarget}, reduction("none"));
  CHECK(none.dims == std::vector<int64_t>{2, 2});
  CHECK(none.to_f64() == std::vector<double>{-3, -2, -0.0, -2});
  CHECK(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, kTarget, kWeight}, reduction("sum")).to_f64()[0] ==
        Approx(-1.1).epsilon(1e-15));
  const Tensor mean = run_node1(12, "NegativeLogLikelihoodLoss", {kInput, kTarget, kWeight});
  CHECK(mean.dims.empty());
  CHECK(mean.to_f64()[0] == Approx(-1.1 / 0.7).epsilon(1e-15));
  // Mean without weight: (3 + 2 + 0 + 2) / 4 negated.
  CHECK(run_node1(22, "NegativeLogLikelihoodLoss", {kInput, kTarget}).to_f64()[0] == -1.75);
}

TEST_CASE("NegativeLogLikelihoodLoss leaves ignored targets out of the loss and of the mean's denominator",
          "[eval][misc]") {
  const Tensor t = i64({2, 2}, {2, -1, 0, -1});
  const Tensor none = run_node1(13, "NegativeLogLikelihoodLoss", {kInput, t}, reduction("none", ignore(-1)));
  CHECK(none.to_f64() == std::vector<double>{-3, 0, 0, 0});
  CHECK(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, t}, ignore(-1)).to_f64()[0] == -1.5);
  // weights of the kept samples: 0.1 (class 2) + 0.2 (class 0).
  CHECK(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, t, kWeight}, ignore(-1)).to_f64()[0] ==
        Approx(-0.3 / 0.3).epsilon(1e-15));
  // Every target ignored: 0 / 0.
  CHECK(std::isnan(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, i64({2, 2}, {5, 5, 5, 5})}, ignore(5))
                       .to_f64()[0]));
  // An ignore_index in range ignores that class.
  CHECK(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, kTarget}, reduction("sum", ignore(2))).to_f64()[0] == -2);
}

TEST_CASE("NegativeLogLikelihoodLoss refuses bad targets, shapes, reductions and types by version", "[eval][misc]") {
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, i64({2, 2}, {3, 0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, i64({2, 2}, {-1, 0, 0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, i64({2}, {0, 0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, kTarget, doubles({2}, {1, 1})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, kTarget}, reduction("avg")), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {kInput, doubles({2, 2}, {0, 0, 0, 0})}), bnorm::Error);
  const Tensor bf = doubles({2, 3, 2}, kInput.to_f64(), DType::bfloat16);
  REQUIRE_THROWS_AS(run_node1(13, "NegativeLogLikelihoodLoss", {bf, kTarget}), bnorm::Error);
  const Tensor r = run_node1(22, "NegativeLogLikelihoodLoss", {bf, kTarget});
  CHECK(r.dtype == DType::bfloat16);
  CHECK(r.to_f64()[0] == -1.75);
  REQUIRE_THROWS_AS(run_node1(11, "NegativeLogLikelihoodLoss", {kInput, kTarget}), bnorm::Error);
}

TEST_CASE("SoftmaxCrossEntropyLoss is the NLL of the log-softmax along C and returns that log_prob", "[eval][misc]") {
  const std::vector<double> s{0.5, -1, 2, 3, 0, 0.25, 1, 1, -2, 4, 0.5, 0.5};
  const Tensor scores = doubles({2, 3, 2}, s);
  std::vector<double> logp(s.size());
  for (int n = 0; n < 2; ++n) {
    for (int d = 0; d < 2; ++d) {
      double sum = 0;
      for (int c = 0; c < 3; ++c) sum += std::exp(s[(n * 3 + c) * 2 + d]);
      for (int c = 0; c < 3; ++c) logp[(n * 3 + c) * 2 + d] = s[(n * 3 + c) * 2 + d] - std::log(sum);
    }
  }
  const auto both = run_node(13, "SoftmaxCrossEntropyLoss", {scores, kTarget}, 2, reduction("none"));
  REQUIRE(both[1].dims == scores.dims);
  for (size_t i = 0; i < logp.size(); ++i) CHECK(both[1].to_f64()[i] == Approx(logp[i]).epsilon(1e-14));
  const std::vector<double> picked{-logp[(0 * 3 + 2) * 2 + 0], -logp[(0 * 3 + 1) * 2 + 1], -logp[(1 * 3 + 0) * 2 + 0],
                                   -logp[(1 * 3 + 2) * 2 + 1]};
  for (size_t i = 0; i < 4; ++i) CHECK(both[0].to_f64()[i] == Approx(picked[i]).epsilon(1e-14));
  const double mean = (picked[0] + picked[1] + picked[2] + picked[3]) / 4;
  CHECK(run_node1(12, "SoftmaxCrossEntropyLoss", {scores, kTarget}).to_f64()[0] == Approx(mean).epsilon(1e-14));
  const double weighted = (picked[0] * 0.1 + picked[1] * 0.3 + picked[2] * 0.2) / (0.1 + 0.3 + 0.2);
  CHECK(run_node1(13, "SoftmaxCrossEntropyLoss", {scores, i64({2, 2}, {2, 1, 0, 7}), kWeight}, ignore(7)).to_f64()[0] ==
        Approx(weighted).epsilon(1e-14));
  // Large scores stay finite: log-softmax subtracts the max first.
  const Tensor big = run_node1(13, "SoftmaxCrossEntropyLoss", {doubles({1, 2}, {1000, 0}), i64({1}, {1})});
  CHECK(big.to_f64()[0] == Approx(1000).epsilon(1e-15));
}

TEST_CASE("SoftmaxCrossEntropyLoss takes bfloat16 from version 13 only and refuses a rank-1 score", "[eval][misc]") {
  const Tensor bf = doubles({1, 2}, {0, 0}, DType::bfloat16);
  REQUIRE_THROWS_AS(run_node1(12, "SoftmaxCrossEntropyLoss", {bf, i64({1}, {0})}), bnorm::Error);
  CHECK(run_node1(13, "SoftmaxCrossEntropyLoss", {bf, i64({1}, {0})}).to_f64()[0] == Approx(std::log(2.0)).epsilon(1e-2));
  REQUIRE_THROWS_AS(run_node1(13, "SoftmaxCrossEntropyLoss", {doubles({3}, {0, 1, 2}), i64({}, {0})}), bnorm::Error);
}
