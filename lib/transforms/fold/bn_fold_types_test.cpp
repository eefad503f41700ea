// fold in every weight type, checked against a float64 reference written
// here: W' = W * s / sqrt(v + eps), b' = (b - m) * s / sqrt(v + eps) + B,
// rounded once to the weight's type; and --verify's verdicts.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/test_graph.h"
#include "kernels/half.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/verify.h"

using namespace bnorm;
using bnorm::test::GraphBuilder;

namespace {

// Conv(3 -> 4, 1x1 kernel 3x3 weights) + BN, every tensor of type `t`.
GraphBuilder conv_bn(DType t, bool with_bias) {
  GraphBuilder g(15);
  g.input("x", t, {1, 3, 5, 5});
  std::vector<double> w(4 * 3 * 3 * 3), b(4), s(4), B(4), m(4), v(4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37 * static_cast<double>(i + 1));
  for (int c = 0; c < 4; ++c) {
    b[c] = 0.25 * c - 0.3;
    s[c] = 0.5 + 0.375 * c;
    B[c] = -0.125 * c;
    m[c] = 0.0625 * c;
    v[c] = c == 3 ? 0.0 : 0.5 + c;  // one channel with zero variance
  }
  g.initializer("w", Tensor::from_f64(t, {4, 3, 3, 3}, w));
  std::vector<std::string> conv_in{"x", "w"};
  if (with_bias) {
    g.initializer("b", Tensor::from_f64(t, {4}, b));
    conv_in.push_back("b");
  }
  for (auto [name, vals] : {std::pair{"s", s}, {"B", B}, {"m", m}, {"v", v}}) g.initializer(name, Tensor::from_f64(t, {4}, vals));
  g.node("Conv", conv_in, {"y"}, "conv");
  auto& bn = g.node("BatchNormalization", {"y", "s", "B", "m", "v"}, {"z"}, "bn");
  bnorm::test::set_attr(bn, "epsilon", 1e-3f);
  g.output("z");
  return g;
}

std::vector<double> initializer_values(const Model& m, const std::string& name) {
  for (const auto& t : m.proto.graph().initializer())
    if (t.name() == name) return decode_tensor(t).to_f64();
  FAIL("no initializer " << name);
  return {};
}

}  // namespace

TEST_CASE("fold computes in float64 and rounds once to the weight type", "[fold]") {
  for (DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
    for (bool with_bias : {true, false}) {
      INFO(dtype_name(t) << (with_bias ? " with bias" : " without bias"));
      GraphBuilder g = conv_bn(t, with_bias);
      Model m = g.model();
      const auto w = initializer_values(m, "w");
      const auto s = initializer_values(m, "s"), B = initializer_values(m, "B");
      const auto mean = initializer_values(m, "m"), var = initializer_values(m, "v");
      const auto b = with_bias ? initializer_values(m, "b") : std::vector<double>(4, 0.0);
      const Model before = m;
      const FoldReport r = fold_batch_norms(m);
      REQUIRE(r.folded.size() == 1);
      const auto& conv = m.proto.graph().node(0);
      const auto w2 = initializer_values(m, conv.input(1));
      const auto b2 = initializer_values(m, conv.input(2));
      const double eps = static_cast<double>(1e-3f);
      for (int c = 0; c < 4; ++c) {
        const double k = s[c] / std::sqrt(var[c] + eps);
        const Tensor want_b = Tensor::from_f64(t, {1}, {(b[c] - mean[c]) * k + B[c]});
        // float64 weights: the reference's algebra may differ in the last bit.
        const double tol = t == DType::float64 ? 1e-14 : 0.0;
        CHECK(b2[c] == Approx(want_b.to_f64()[0]).epsilon(tol).margin(tol));
        for (int i = 0; i < 27; ++i) {
          const Tensor want_w = Tensor::from_f64(t, {1}, {w[c * 27 + i] * k});
          CHECK(w2[c * 27 + i] == Approx(want_w.to_f64()[0]).epsilon(tol).margin(tol));
        }
      }
      const auto checks = verify_folds(before, m, r, 5);
      REQUIRE(checks.size() == 1);
      INFO("max abs " << checks[0].max_abs << " max rel " << checks[0].max_rel);
      CHECK(checks[0].pass);
      CHECK(checks[0].type == dtype_name(t));
    }
  }
}

TEST_CASE("verify catches a fold whose weights are off", "[fold]") {
  GraphBuilder g = conv_bn(DType::float32, true);
  Model m = g.model();
  const Model before = m;
  const FoldReport r = fold_batch_norms(m);
  for (auto& t : *m.proto.mutable_graph()->mutable_initializer()) {
    if (t.name() != m.proto.graph().node(0).input(1)) continue;
    Tensor w = decode_tensor(t);
    for (int i = 0; i < 27; ++i) w.data<float>()[i] *= 1.01f;  // output channel 0 off by 1%
    encode_tensor(w, &t);
  }
  const auto checks = verify_folds(before, m, r, 5);
  REQUIRE(checks.size() == 1);
  CHECK_FALSE(checks[0].pass);
  CHECK(checks[0].max_rel > 1e-4);
}
