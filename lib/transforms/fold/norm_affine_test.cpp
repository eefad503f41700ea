// The norm-family fold against float64 references written here from the
// specs: LayerNormalization/RMSNormalization over the last axis,
// GroupNormalization over groups of channels, then the affine, then the
// consumer as it was. The folded model runs in bnorm's evaluator.
#include "transforms/fold/norm_affine.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "eval/run/evaluator.h"
#include "support/test_graph.h"
#include "model/tensor_proto.h"

using namespace bnorm;
using bnorm::test::GraphBuilder;
using bnorm::test::set_attr;

namespace {

std::vector<double> wave(size_t n, double seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(seed + 1.7 * static_cast<double>(i)) * (1.0 + 0.1 * (i % 5));
  return v;
}

Tensor f32(const std::vector<int64_t>& dims, const std::vector<double>& v) { return Tensor::from_f64(DType::float32, dims, v); }

// Rows of length K: LayerNormalization (x - mean) / sqrt(var + eps), or
// RMSNormalization x / sqrt(mean(x^2) + eps).
std::vector<double> normalize_rows(const std::vector<double>& x, size_t K, bool rms) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / K; ++r) {
    double mean = 0, sq = 0;
    for (size_t k = 0; k < K; ++k) mean += x[r * K + k] / K;
    if (rms) mean = 0;
    for (size_t k = 0; k < K; ++k) sq += (x[r * K + k] - mean) * (x[r * K + k] - mean) / K;
    for (size_t k = 0; k < K; ++k) out[r * K + k] = (x[r * K + k] - mean) / std::sqrt(sq + 1e-5);
  }
  return out;
}

// x [N, C, S]: each of G groups of C/G channels normalized as one.
std::vector<double> normalize_groups(const std::vector<double>& x, size_t C, size_t S, size_t G) {
  return normalize_rows(x, C / G * S, false);  // a group is contiguous in [N, C, S]
}

// y[r, k] = n[r, k] * s[k] + b[k] (b empty: none), k = (i / inner) % K.
std::vector<double> affine(std::vector<double> n, const std::vector<double>& s, const std::vector<double>& b, size_t K,
                           size_t inner) {
  for (size_t i = 0; i < n.size(); ++i) {
    const size_t k = (i / inner) % K;
    n[i] = n[i] * s[k] + (b.empty() ? 0.0 : b[k]);
  }
  return n;
}

// z[r, j] = sum_k y[r, k] W[k, j] (W [K, N] row-major, or [N, K] with trans).
std::vector<double> linear(const std::vector<double>& y, const std::vector<double>& w, size_t K, size_t N, bool trans) {
  std::vector<double> z(y.size() / K * N, 0.0);
  for (size_t r = 0; r < y.size() / K; ++r)
    for (size_t j = 0; j < N; ++j)
      for (size_t k = 0; k < K; ++k) z[r * N + j] += y[r * K + k] * (trans ? w[j * K + k] : w[k * N + j]);
  return z;
}

std::vector<double> run(const Model& m, const std::vector<int64_t>& dims, const std::vector<double>& x,
                        const std::string& out) {
  return evaluate(m, {{"x", f32(dims, x)}}).at(out).to_f64();
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-5));
}

const onnx::TensorProto* init(const Model& m, const std::string& name) {
  for (const auto& t : m.proto.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// x [M, K] -> LayerNormalization(s, b) -> y -> Gemm(W [N, K], C [N], transB 1, alpha 2, beta 0.5) -> z
GraphBuilder ln_gemm(bool with_c, float beta) {
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 4});
  g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln");
  auto& gemm = g.node("Gemm", with_c ? std::vector<std::string>{"y", "W", "C"} : std::vector<std::string>{"y", "W"},
                      {"z"}, "fc");
  set_attr(gemm, "transB", int64_t{1});
  set_attr(gemm, "alpha", 2.0f);
  set_attr(gemm, "beta", beta);
  g.initializer("s", f32({4}, wave(4, 1)));
  g.initializer("b", f32({4}, wave(4, 2)));
  g.initializer("W", f32({3, 4}, wave(12, 3)));
  if (with_c) g.initializer("C", f32({3}, wave(3, 4)));
  g.output("z");
  return g;
}

}  // namespace

TEST_CASE("a LayerNormalization's scale and bias fold into the Gemm that reads it, alpha and beta counted",
          "[fold][norm_fold]") {
  for (bool with_c : {true, false}) {
    for (float beta : {0.5f, 0.0f}) {
      INFO("C " << with_c << ", beta " << beta);
      Model m = ln_gemm(with_c, beta).model();
      const NormFoldReport r = fold_norm_affines(m);
      REQUIRE(r.folded.size() == 1);
      CHECK(r.folded[0].norm_label == "ln");
      CHECK(r.folded[0].consumer_op == "Gemm");
      CHECK(r.folded[0].bias_into == "C");
      const auto& ln = m.proto.graph().node(0);
      CHECK(ln.input_size() == 2);  // the bias is dropped
      for (double v : decode_tensor(*init(m, ln.input(1))).to_f64()) CHECK(v == 1.0);
      const auto x = wave(8, 5);
      auto z = linear(affine(normalize_rows(x, 4, false), wave(4, 1), wave(4, 2), 4, 1), wave(12, 3), 4, 3, true);
      for (size_t i = 0; i < z.size(); ++i) z[i] = 2 * z[i] + (with_c ? beta * wave(3, 4)[i % 3] : 0.0);
      check_close(run(m, {2, 4}, x, "z"), z);
    }
  }
}

TEST_CASE("a LayerNormalization over the last of three axes folds into MatMul and its bias into the Add after it",
          "[fold][norm_fold]") {
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 3, 4});
  set_attr(g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln"), "axis", int64_t{2});
  g.node("MatMul", {"y", "W"}, {"mm"}, "proj");
  g.node("Add", {"A", "mm"}, {"z"}, "add");
  g.initializer("s", f32({4}, wave(4, 1)));
  g.initializer("b", f32({4}, wave(4, 2)));
  g.initializer("W", f32({4, 5}, wave(20, 3)));
  g.initializer("A", f32({1, 5}, wave(5, 4)));
  g.output("z");
  Model m = g.model();
  const NormFoldReport r = fold_norm_affines(m);
  REQUIRE(r.folded.size() == 1);
  CHECK(r.folded[0].bias_into == "add");
  CHECK(r.folded[0].output == "z");
  const auto x = wave(24, 6);
  auto z = linear(affine(normalize_rows(x, 4, false), wave(4, 1), wave(4, 2), 4, 1), wave(20, 3), 4, 5, false);
  for (size_t i = 0; i < z.size(); ++i) z[i] += wave(5, 4)[i % 5];
  check_close(run(m, {2, 3, 4}, x, "z"), z);
}

TEST_CASE("an RMSNormalization's scale folds into a Gemm with transB 0 and no C", "[fold][norm_fold]") {
  GraphBuilder g(23);
  g.input("x", DType::float32, {3, 4});
  g.node("RMSNormalization", {"x", "s"}, {"y"}, "rms");
  set_attr(g.node("Gemm", {"y", "W"}, {"z"}, "fc"), "alpha", 0.5f);
  g.initializer("s", f32({1, 4}, wave(4, 1)));
  g.initializer("W", f32({4, 2}, wave(8, 3)));
  g.output("z");
  const Model before = g.model();
  Model m = before;
  const NormFoldReport r = fold_norm_affines(m);
  REQUIRE(r.folded.size() == 1);
  CHECK(r.folded[0].bias_into.empty());
  CHECK(verify_norm_folds(before, m, r, 4).at(0).pass);
  CHECK(m.proto.graph().node(1).input_size() == 2);
  const auto x = wave(12, 7);
  auto z = linear(affine(normalize_rows(x, 4, true), wave(4, 1), {}, 4, 1), wave(8, 3), 4, 2, false);
  for (double& v : z) v *= 0.5;
  check_close(run(m, {3, 4}, x, "z"), z);
}

TEST_CASE("GroupNormalization 21 (per channel) and 18 (per group) fold into a following 1x1 Conv",
          "[fold][norm_fold]") {
  for (int version : {21, 18}) {
    INFO("GroupNormalization-" << version);
    const size_t P = version == 21 ? 4 : 2;  // scale/bias values
    GraphBuilder g(version);
    g.input("x", DType::float32, {2, 4, 3});
    set_attr(g.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", int64_t{2});
    g.node("Conv", {"y", "W", "B"}, {"z"}, "conv");
    g.initializer("s", f32({static_cast<int64_t>(P)}, wave(P, 1)));
    g.initializer("b", f32({static_cast<int64_t>(P)}, wave(P, 2)));
    g.initializer("W", f32({5, 4, 1}, wave(20, 3)));
    g.initializer("B", f32({5}, wave(5, 4)));
    g.output("z");
    const Model before = g.model();
    Model m = before;
    const NormFoldReport r = fold_norm_affines(m);
    REQUIRE(r.folded.size() == 1);
    CHECK(r.folded[0].bias_into == "B");
    const auto checks = verify_norm_folds(before, m, r, 2);
    REQUIRE(checks.size() == 1);
    CHECK(checks[0].pass);
    CHECK(checks[0].shape == std::vector<int64_t>{2, 4, 3});
    for (double v : decode_tensor(*init(m, "b")).to_f64()) CHECK(v == 0.0);
    const auto x = wave(24, 8);
    std::vector<double> s = wave(P, 1), b = wave(P, 2);
    if (P == 2) s = {s[0], s[0], s[1], s[1]}, b = {b[0], b[0], b[1], b[1]};
    const auto y = affine(normalize_groups(x, 4, 3, 2), s, b, 4, 3);
    std::vector<double> z(2 * 5 * 3);
    const auto W = wave(20, 3), B = wave(5, 4);
    for (size_t n = 0; n < 2; ++n)
      for (size_t o = 0; o < 5; ++o)
        for (size_t p = 0; p < 3; ++p) {
          double acc = B[o];
          for (size_t c = 0; c < 4; ++c) acc += W[o * 4 + c] * y[(n * 4 + c) * 3 + p];
          z[(n * 5 + o) * 3 + p] = acc;
        }
    check_close(run(m, {2, 4, 3}, x, "z"), z);
  }
}

TEST_CASE("the norm fold keeps what it may not fold and says why", "[fold][norm_fold]") {
  auto reason = [](Model m) {
    const NormFoldReport r = fold_norm_affines(m);
    REQUIRE(r.folded.empty());
    REQUIRE(r.skipped.size() == 1);
    return r.skipped[0].reason;
  };
  SECTION("two consumers") {
    GraphBuilder g = ln_gemm(true, 1.0f);
    g.node("Relu", {"y"}, {"r"}, "relu");
    g.output("r");
    CHECK(reason(g.model()) == "output 'y' has 2 consumers");
  }
  SECTION("a graph output") {
    GraphBuilder g = ln_gemm(true, 1.0f);
    g.output("y");
    CHECK(reason(g.model()) == "output 'y' is a graph output");
  }
  SECTION("more than the last axis") {
    GraphBuilder g = ln_gemm(true, 1.0f);
    set_attr(*g.graph().mutable_node(0), "axis", int64_t{0});
    CHECK_THAT(reason(g.model()), Catch::StartsWith("axis = 0 normalizes more than the last axis"));
  }
  SECTION("Gemm with transA") {
    GraphBuilder g = ln_gemm(true, 1.0f);
    set_attr(*g.graph().mutable_node(1), "transA", int64_t{1});
    CHECK_THAT(reason(g.model()), Catch::StartsWith("Gemm has transA = 1"));
  }
  SECTION("a weight that is not a constant") {
    GraphBuilder g = ln_gemm(true, 1.0f);
    g.graph().mutable_node(1)->set_input(1, "x2");
    g.input("x2", DType::float32, {3, 4});
    CHECK(reason(g.model()) == "Gemm B 'x2' is not a constant");
  }
  SECTION("a MatMul with nowhere to put the bias") {
    GraphBuilder g(17);
    g.input("x", DType::float32, {2, 4});
    g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln");
    g.node("MatMul", {"y", "W"}, {"z"}, "mm");
    g.initializer("s", f32({4}, wave(4, 1)));
    g.initializer("b", f32({4}, wave(4, 2)));
    g.initializer("W", f32({4, 3}, wave(12, 3)));
    g.output("z");
    CHECK_THAT(reason(g.model()), Catch::StartsWith("MatMul has no bias for bias*W"));
  }
  SECTION("a Conv that pads, and one with a 3x3 kernel") {
    for (bool pad : {true, false}) {
      GraphBuilder g(21);
      g.input("x", DType::float32, {1, 4, 3, 3});
      set_attr(g.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", int64_t{2});
      auto& conv = g.node("Conv", {"y", "W"}, {"z"}, "conv");
      g.initializer("s", f32({4}, wave(4, 1)));
      g.initializer("b", f32({4}, wave(4, 2)));
      g.initializer("W", pad ? f32({2, 4, 1, 1}, wave(8, 3)) : f32({2, 4, 3, 3}, wave(72, 3)));
      g.output("z");
      if (pad) {
        auto* a = conv.add_attribute();
        a->set_name("pads");
        a->set_type(onnx::AttributeProto::INTS);
        for (int i = 0; i < 4; ++i) a->add_ints(1);
      }
      CHECK_THAT(reason(g.model()), Catch::StartsWith(pad ? "Conv pads its input" : "Conv kernel is [3, 3], not 1x1"));
    }
  }
  SECTION("a LayerNormalization read by something else than Gemm or MatMul") {
    GraphBuilder g(17);
    g.input("x", DType::float32, {2, 4});
    g.node("LayerNormalization", {"x", "s"}, {"y"}, "ln");
    g.node("Relu", {"y"}, {"z"}, "relu");
    g.initializer("s", f32({4}, wave(4, 1)));
    g.output("z");
    CHECK(reason(g.model()) == "output 'y' is read by Relu, not Gemm or MatMul");
  }
}

TEST_CASE("a MatMul after a LayerNormalization with zero bias folds without an Add, verify_norm_folds passes",
          "[fold][norm_fold]") {
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 4});
  g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln");
  g.node("MatMul", {"y", "W"}, {"z"}, "mm");
  g.initializer("s", f32({4}, wave(4, 1)));
  g.initializer("b", f32({4}, {0, 0, 0, 0}));
  g.initializer("W", f32({4, 3}, wave(12, 3)));
  g.output("z");
  const Model before = g.model();
  Model m = before;
  const NormFoldReport r = fold_norm_affines(m);
  REQUIRE(r.folded.size() == 1);
  CHECK_FALSE(init(m, "b"));  // dropped, and nothing else read it
  const auto checks = verify_norm_folds(before, m, r, 7);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].pass);
  CHECK(checks[0].bn == "ln");
  CHECK(checks[0].producer == "mm");
  CHECK(checks[0].max_rel < 1e-5);
  // A fold that did not happen as reported is caught: the folded weight doubled.
  Model bad = m;
  for (auto& t : *bad.proto.mutable_graph()->mutable_initializer()) {
    if (t.name() != "W") continue;
    auto v = decode_tensor(t).to_f64();
    for (double& x : v) x *= 2;
    encode_tensor(Tensor::from_f64(DType::float32, {4, 3}, v), &t);
  }
  CHECK_FALSE(verify_norm_folds(before, bad, r, 7)[0].pass);
}

TEST_CASE("a float16 LayerNormalization folds into a float16 MatMul and Add, the weights stay float16 and verify",
          "[fold][norm_fold]") {
  auto f16 = [](const std::vector<int64_t>& dims, const std::vector<double>& v) {
    return Tensor::from_f64(DType::float16, dims, v);
  };
  GraphBuilder g(17);
  g.input("x", DType::float16, {3, 8});
  g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln");
  g.node("MatMul", {"y", "W"}, {"mm"}, "mm");
  g.node("Add", {"mm", "A"}, {"z"}, "add");
  g.initializer("s", f16({8}, wave(8, 1)));
  g.initializer("b", f16({8}, wave(8, 2)));
  g.initializer("W", f16({8, 4}, wave(32, 3)));
  g.initializer("A", f16({4}, wave(4, 4)));
  g.output("z");
  const Model before = g.model();
  Model m = before;
  const NormFoldReport r = fold_norm_affines(m);
  REQUIRE(r.folded.size() == 1);
  for (const auto& t : m.proto.graph().initializer()) CHECK(t.data_type() == onnx::TensorProto::FLOAT16);
  const auto checks = verify_norm_folds(before, m, r, 9);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].type == "float16");
  CHECK(checks[0].rtol == 1e-2);
  CHECK(checks[0].pass);
}
