// Attention-23 through bnorm::evaluate: small hand-computed cases, and
// random cases against a float64 reference written here from the
// Changelog's pipeline (reshape/transpose of 3-D inputs, past ++ current,
// repeated key/value heads, sqrt(scale) on Q and K, softcap, mask and causal
// bias, softmax with fully masked rows zero, matmul with V).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A dense 4-D array of doubles.
struct A4 {
  int64_t n[4] = {0, 0, 0, 0};
  std::vector<double> v;
  A4(int64_t a, int64_t b, int64_t c, int64_t d) : n{a, b, c, d}, v(static_cast<size_t>(a * b * c * d)) {}
  double& at(int64_t a, int64_t b, int64_t c, int64_t d) { return v[((a * n[1] + b) * n[2] + c) * n[3] + d]; }
  double at(int64_t a, int64_t b, int64_t c, int64_t d) const { return v[((a * n[1] + b) * n[2] + c) * n[3] + d]; }
};

// A 4-D tensor, or a 3-D (B, S, H*E) one reshaped to (B, S, H, E) and transposed to (B, H, S, E).
A4 heads_of(const Tensor& t, int64_t heads) {
  const std::vector<double> x = t.to_f64();
  if (t.dims.size() == 4) {
    A4 a(t.dims[0], t.dims[1], t.dims[2], t.dims[3]);
    a.v = x;
    return a;
  }
  const int64_t e = t.dims[2] / heads;
  A4 a(t.dims[0], heads, t.dims[1], e);
  for (int64_t b = 0; b < a.n[0]; ++b)
    for (int64_t s = 0; s < a.n[2]; ++s)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t k = 0; k < e; ++k) a.at(b, h, s, k) = x[((b * a.n[2] + s) * heads + h) * e + k];
  return a;
}

A4 concat_seq(const A4* past, const A4& cur) {
  const int64_t p = past ? past->n[2] : 0;
  A4 out(cur.n[0], cur.n[1], p + cur.n[2], cur.n[3]);
  for (int64_t b = 0; b < out.n[0]; ++b)
    for (int64_t h = 0; h < out.n[1]; ++h)
      for (int64_t s = 0; s < out.n[2]; ++s)
        for (int64_t e = 0; e < out.n[3]; ++e)
          out.at(b, h, s, e) = s < p ? past->at(b, h, s, e) : cur.at(b, h, s - p, e);
  return out;
}

// Element (b, h, i, j) of `mask` broadcast right-aligned to 4-D, as a bias;
// -inf past a last dimension shorter than the keys (not 1: Attention-24 on).
double mask_bias(const Tensor& mask, const std::vector<double>& m, int64_t b, int64_t h, int64_t i, int64_t j) {
  const int64_t idx[4] = {b, h, i, j};
  if (!mask.dims.empty() && mask.dims.back() != 1 && j >= mask.dims.back()) return -kInf;
  const size_t r = mask.dims.size();
  int64_t off = 0;
  for (size_t k = 0; k < r; ++k) {
    const int64_t dim = mask.dims[k];
    off = off * dim + (dim == 1 ? 0 : idx[4 - r + k]);
  }
  if (mask.dtype == DType::boolean) return m[off] != 0 ? 0.0 : -kInf;
  return m[off];
}

struct RefArgs {
  Tensor q, k, v, mask, past_k, past_v;
  int64_t q_heads = 0, kv_heads = 0;  // for 3-D inputs
  double scale = 0;                   // 0: 1/sqrt(head size)
  double softcap = 0;
  bool causal = false;
  int mode = 0;
  int64_t opset = 23;
  std::vector<int64_t> nonpad;  // nonpad_kv_seqlen (24 on), or none
  int64_t left = -1, right = -1;  // the window (25 on)
};

struct RefOut {
  std::vector<double> y, qk;
};

RefOut reference(const RefArgs& a) {
  A4 q = heads_of(a.q, a.q_heads), k0 = heads_of(a.k, a.kv_heads), v0 = heads_of(a.v, a.kv_heads);
  const bool has_past = a.past_k.dtype != DType::undefined;
  A4 pk = has_past ? heads_of(a.past_k, 0) : A4(0, 0, 0, 0), pv = has_past ? heads_of(a.past_v, 0) : A4(0, 0, 0, 0);
  A4 k = concat_seq(has_past ? &pk : nullptr, k0), v = concat_seq(has_past ? &pv : nullptr, v0);
  const int64_t B = q.n[0], H = q.n[1], S = q.n[2], D = q.n[3], T = k.n[2], Dv = v.n[3], P = has_past ? pk.n[2] : 0;
  const int64_t rep = H / k.n[1];
  const double root = std::sqrt(a.scale != 0 ? a.scale : 1.0 / std::sqrt(double(D)));
  const std::vector<double> m = a.mask.dtype != DType::undefined ? a.mask.to_f64() : std::vector<double>{};
  A4 qk(B, H, S, T), y(B, H, S, Dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> s(T), bias(T, 0.0);
        bool masked = true;
        // The query's absolute position: after the past, or nonpad - S for an external cache.
        const int64_t p = i + (a.nonpad.empty() ? P : a.nonpad[b] - S);
        const int64_t valid = a.nonpad.empty() ? T : a.nonpad[b];
        for (int64_t j = 0; j < T; ++j) {
          for (int64_t e = 0; e < D; ++e) s[j] += q.at(b, h, i, e) * root * (k.at(b, h / rep, j, e) * root);
          if (a.mode == 0) qk.at(b, h, i, j) = s[j];
          if (a.softcap > 0) s[j] = a.softcap * std::tanh(s[j] / a.softcap);
          if (a.mode == 1) qk.at(b, h, i, j) = s[j];
          if (!m.empty()) bias[j] += mask_bias(a.mask, m, b, h, i, j);
          const bool in_window = (a.left < 0 || j >= p - a.left) && (a.right < 0 || j <= p + a.right);
          if ((a.causal && j > p) || j >= valid || !in_window) bias[j] = -kInf;
          masked = masked && bias[j] == -kInf;
          s[j] += bias[j];
          if (a.mode == 2) qk.at(b, h, i, j) = s[j];
        }
        double mx = -kInf, sum = 0;
        for (double x : s) mx = std::max(mx, x);
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (int64_t j = 0; j < T; ++j) {
          s[j] = masked ? 0.0 : s[j] / sum;
          if (a.mode == 3) qk.at(b, h, i, j) = s[j];
          for (int64_t e = 0; e < Dv; ++e) y.at(b, h, i, e) += s[j] * v.at(b, h / rep, j, e);
        }
      }
  RefOut out{y.v, qk.v};
  if (a.q.dims.size() == 3) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t e = 0; e < Dv; ++e) out.y[((b * S + i) * H + h) * Dv + e] = y.at(b, h, i, e);
  }
  return out;
}

Attrs attrs_of(const RefArgs& a) {
  return [a](onnx::NodeProto& n) {
    if (a.q_heads) set_attr(n, "q_num_heads", a.q_heads);
    if (a.kv_heads) set_attr(n, "kv_num_heads", a.kv_heads);
    if (a.scale != 0) set_attr(n, "scale", static_cast<float>(a.scale));
    if (a.softcap != 0) set_attr(n, "softcap", static_cast<float>(a.softcap));
    if (a.causal) set_attr(n, "is_causal", int64_t{1});
    if (a.mode) set_attr(n, "qk_matmul_output_mode", int64_t{a.mode});
    if (a.left != -1) set_attr(n, "left_window_size", a.left);
    if (a.right != -1) set_attr(n, "right_window_size", a.right);
  };
}

// Y and qk_matmul_output of the node against the reference, each rounded to the output type.
void check_against_reference(const RefArgs& a) {
  const Tensor nonpad = a.nonpad.empty() ? Tensor()
                                         : Tensor::from_f64(DType::int64, {int64_t(a.nonpad.size())},
                                                            std::vector<double>(a.nonpad.begin(), a.nonpad.end()));
  std::vector<Tensor> in{a.q, a.k, a.v, a.mask, a.past_k, a.past_v, nonpad};
  while (in.back().dtype == DType::undefined) in.pop_back();
  const auto got = run_node(a.opset, "Attention", in, {"y", "", "", "qk"}, attrs_of(a));
  const RefOut want = reference(a);
  const Tensor want_y = Tensor::from_f64(a.q.dtype, got[0].dims, want.y);
  const Tensor want_qk = Tensor::from_f64(a.q.dtype, got[1].dims, want.qk);
  const std::vector<double> gy = got[0].to_f64(), wy = want_y.to_f64(), gq = got[1].to_f64(), wq = want_qk.to_f64();
  REQUIRE(gy.size() == wy.size());
  REQUIRE(gq.size() == wq.size());
  // float64 sums in another order may differ in the last bit before rounding.
  for (size_t i = 0; i < gy.size(); ++i) CHECK(gy[i] == Approx(wy[i]).epsilon(1e-6).margin(1e-7));
  for (size_t i = 0; i < gq.size(); ++i) {
    if (std::isinf(wq[i])) CHECK(gq[i] == wq[i]);
    else CHECK(gq[i] == Approx(wq[i]).epsilon(1e-6).margin(1e-7));
  }
}

}  // namespace

TEST_CASE("Attention weighs V by the softmax of the scaled scores: a hand-computed case", "[eval][attention]") {
  // One head of size 1, scale 1: scores ln 3 and 0, weights 3/4 and 1/4.
  const Tensor q = f32({1, 1, 1, 1}, {1}), k = f32({1, 1, 2, 1}, {std::log(3.0), 0}), v = f32({1, 1, 2, 1}, {4, 8});
  for (int mode : {0, 3}) {
    const auto got = run_node(23, "Attention", {q, k, v}, {"y", "", "", "qk"},
                         [&](onnx::NodeProto& n) { set_attr(n, "qk_matmul_output_mode", int64_t{mode}); });
    CHECK(got[0].to_f64()[0] == Approx(5.0));
    const std::vector<double> qk = got[1].to_f64();
    CHECK(qk[0] == Approx(mode == 0 ? std::log(3.0) : 0.75));
    CHECK(qk[1] == Approx(mode == 0 ? 0.0 : 0.25));
  }
}

TEST_CASE("Attention's default scale is 1/sqrt(head size) and the attribute replaces it", "[eval][attention]") {
  // Head size 4, q = k0 = (1,1,1,1): the score of k0 is 4 * scale, of k1 (zeros) 0.
  const Tensor q = f32({1, 1, 1, 4}, {1, 1, 1, 1}), k = f32({1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0});
  const Tensor v = f32({1, 1, 2, 1}, {1, 0});
  const double w_default = 1 / (1 + std::exp(-2.0));
  CHECK(run_node(23, "Attention", {q, k, v}, {"y"})[0].to_f64()[0] == Approx(w_default));
  const auto scaled = run_node(23, "Attention", {q, k, v}, {"y"}, [](auto& n) { set_attr(n, "scale", 0.25f); });
  CHECK(scaled[0].to_f64()[0] == Approx(1 / (1 + std::exp(-1.0))));
  const auto zero = run_node(23, "Attention", {q, k, v}, {"y"}, [](auto& n) { set_attr(n, "scale", 0.0f); });
  CHECK(zero[0].to_f64()[0] == Approx(0.5));
}

TEST_CASE("Attention's is_causal hides later keys, offset by the past length", "[eval][attention]") {
  // Equal scores everywhere: each query averages the values it may see.
  const Tensor q = f32({1, 1, 2, 1}, {0, 0}), k = f32({1, 1, 2, 1}, {0, 0}), v = f32({1, 1, 2, 1}, {2, 4});
  const auto causal = [](onnx::NodeProto& n) { set_attr(n, "is_causal", int64_t{1}); };
  CHECK(run_node(23, "Attention", {q, k, v}, {"y"}, causal)[0].to_f64() == std::vector<double>{2, 3});
  // One cached key (value 6) before the two new ones: query 0 sees keys 0..1.
  const Tensor pk = f32({1, 1, 1, 1}, {0}), pv = f32({1, 1, 1, 1}, {6});
  const auto got = run_node(23, "Attention", {q, k, v, Tensor(), pk, pv}, {"y", "pk", "pv"}, causal);
  CHECK(got[0].to_f64() == std::vector<double>{4, 4});
  CHECK(got[1].dims == std::vector<int64_t>{1, 1, 3, 1});
  CHECK(got[2].to_f64() == std::vector<double>{6, 2, 4});
}

TEST_CASE("Attention gives a zero row where every key is masked, in Y and in mode 3", "[eval][attention]") {
  const Tensor q = f32({1, 1, 2, 1}, {1, 2}), k = f32({1, 1, 2, 1}, {1, -1}), v = f32({1, 1, 2, 1}, {2, 4});
  const Tensor mask = Tensor::from_f64(DType::boolean, {2, 2}, {0, 0, 1, 0});
  const auto got = run_node(23, "Attention", {q, k, v, mask}, {"y", "", "", "qk"},
                       [](auto& n) { set_attr(n, "qk_matmul_output_mode", int64_t{3}); });
  CHECK(got[0].to_f64() == std::vector<double>{0, 2});
  CHECK(got[1].to_f64() == std::vector<double>{0, 0, 1, 0});
  // A float mask of -inf everywhere in a row is fully masked too; a key-less row (T = 0) is zero.
  const Tensor fmask = f32({1, 2}, {-kInf, -kInf});
  CHECK(run_node(23, "Attention", {q, k, v, fmask}, {"y"})[0].to_f64() == std::vector<double>{0, 0});
  const Tensor k0 = f32({1, 1, 0, 1}, {}), v0 = f32({1, 1, 0, 3}, {});
  const Tensor y0 = run_node(23, "Attention", {q, k0, v0}, {"y"})[0];
  CHECK(y0.dims == std::vector<int64_t>{1, 1, 2, 3});
  CHECK(y0.to_f64() == std::vector<double>(6, 0.0));
}

TEST_CASE("Attention's softcap bounds the scores before the mask is added", "[eval][attention]") {
  const Tensor q = f32({1, 1, 1, 1}, {1}), k = f32({1, 1, 2, 1}, {3, 0}), v = f32({1, 1, 2, 1}, {1, 0});
  const Tensor mask = f32({1, 2}, {0, -kInf});
  // Mode 0 is the product before the softcap, as the spec says (the
  // reference implementation returns it after).
  for (int mode : {0, 1, 2}) {
    const auto got = run_node(23, "Attention", {q, k, v, mask}, {"y", "", "", "qk"}, [&](onnx::NodeProto& n) {
      set_attr(n, "softcap", 2.0f);
      set_attr(n, "qk_matmul_output_mode", int64_t{mode});
    });
    CHECK(got[1].to_f64()[0] == Approx(mode == 0 ? 3.0 : 2 * std::tanh(1.5)));
    CHECK(got[1].to_f64()[1] == (mode < 2 ? 0.0 : -kInf));
    CHECK(got[0].to_f64()[0] == Approx(1.0));
  }
}

TEST_CASE("Attention matches the reference for 4-D inputs with masks, past, GQA, causal and every mode",
          "[eval][attention]") {
  uint32_t seed = 1;
  for (int mode = 0; mode < 4; ++mode) {
    RefArgs a;
    a.q = random_tensor(DType::float32, {2, 4, 3, 5}, seed++);
    a.k = random_tensor(DType::float32, {2, 2, 4, 5}, seed++);
    a.v = random_tensor(DType::float32, {2, 2, 4, 6}, seed++);
    a.past_k = random_tensor(DType::float32, {2, 2, 2, 5}, seed++);
    a.past_v = random_tensor(DType::float32, {2, 2, 2, 6}, seed++);
    a.mask = mode % 2 ? random_tensor(DType::float32, {2, 1, 3, 6}, seed++)
                      : Tensor::from_f64(DType::boolean, {3, 6},
                                         {1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1});
    a.causal = mode >= 2;
    a.softcap = mode == 1 ? 0.5 : 0;
    a.scale = mode == 3 ? 0.3 : 0;
    a.mode = mode;
    check_against_reference(a);
  }
}

TEST_CASE("Attention reads 3-D inputs as (batch, sequence, heads * head size)", "[eval][attention]") {
  RefArgs a;
  a.q = random_tensor(DType::float32, {2, 3, 12}, 11);  // 6 query heads of 2
  a.k = random_tensor(DType::float32, {2, 4, 4}, 12);   // 2 key heads of 2
  a.v = random_tensor(DType::float32, {2, 4, 6}, 13);   // 2 value heads of 3
  a.q_heads = 6;
  a.kv_heads = 2;
  a.causal = true;
  check_against_reference(a);
  a.mask = random_tensor(DType::float32, {3, 4}, 14);
  a.causal = false;
  a.mode = 2;
  check_against_reference(a);
}

TEST_CASE("Attention rounds float16 once and keeps V's own type for present_value", "[eval][attention]") {
  RefArgs a;
  a.q = random_tensor(DType::float16, {1, 2, 3, 8}, 21);
  a.k = random_tensor(DType::float16, {1, 2, 5, 8}, 22);
  a.v = random_tensor(DType::float16, {1, 2, 5, 8}, 23);
  check_against_reference(a);
  // softmax_precision float: float64 already covers it, the numbers do not change.
  const auto plain = run_node(23, "Attention", {a.q, a.k, a.v}, {"y"});
  const auto precise = run_node(23, "Attention", {a.q, a.k, a.v}, {"y"},
                           [](auto& n) { set_attr(n, "softmax_precision", int64_t{1}); });
  CHECK(precise[0].to_f64() == plain[0].to_f64());
  const Tensor v64 = random_tensor(DType::float64, {1, 2, 5, 8}, 23);
  const auto got = run_node(23, "Attention", {a.q, a.k, v64}, {"y", "pk", "pv"});
  CHECK(got[0].dtype == DType::float16);
  CHECK(got[1].dtype == DType::float16);
  CHECK(got[2].dtype == DType::float64);
  CHECK(got[2].to_f64() == v64.to_f64());
}

TEST_CASE("Attention propagates NaN in a score to its row", "[eval][attention]") {
  const Tensor q = f32({1, 1, 2, 1}, {std::nan(""), 1}), k = f32({1, 1, 2, 1}, {1, 2}), v = f32({1, 1, 2, 1}, {1, 2});
  const std::vector<double> y = run_node(23, "Attention", {q, k, v}, {"y"})[0].to_f64();
  CHECK(std::isnan(y[0]));
  CHECK(std::isfinite(y[1]));
}

TEST_CASE("Attention refuses invalid nodes and versions it does not implement", "[eval][attention]") {
  const Tensor q = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), k = q, v = q;
  const Tensor q3 = f32({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto expect_error = [](const std::vector<Tensor>& in, const Attrs& attrs = {}, int64_t opset = 23) {
    REQUIRE_THROWS_AS(run_node(opset, "Attention", in, {"y"}, attrs), bnorm::Error);
  };
  expect_error({q3, q3, q3});                                           // 3-D without head counts
  expect_error({q3, q3, q3}, [](auto& n) {                              // 4 is not 3 heads
    set_attr(n, "q_num_heads", int64_t{3});
    set_attr(n, "kv_num_heads", int64_t{3});
  });
  expect_error({q, f32({1, 3, 2, 2}, std::vector<double>(12, 1)), f32({1, 3, 2, 2}, std::vector<double>(12, 1))});
  expect_error({q, k, f32({1, 2, 3, 2}, std::vector<double>(12, 1))});  // K and V lengths differ
  expect_error({q3, q3, q});                                            // mixed ranks
  expect_error({q, k, v, f32({3, 2}, std::vector<double>(6, 0))});      // mask does not broadcast
  // A mask shorter than the keys is padded with -inf from Attention-24 on; at 23 it must broadcast.
  const Tensor k3 = f32({1, 2, 3, 2}, std::vector<double>(12, 1));
  expect_error({q, k3, k3, f32({2, 2}, std::vector<double>(4, 0))});
  CHECK(run_node(23, "Attention", {q, k3, k3, f32({2, 1}, {0, 0})}, {"y"})[0].dims == q.dims);
  expect_error({q, k, v, Tensor(), q});                                 // past_key alone
  expect_error({q, k, v, Tensor(), f32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6}), f32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6})});
  expect_error({Tensor::from_f64(DType::int32, {1, 2, 2, 2}, std::vector<double>(8, 1)), k, v});
  expect_error({q, k, v}, [](auto& n) { set_attr(n, "qk_matmul_output_mode", int64_t{4}); });
  expect_error({q, k, v}, [](auto& n) { set_attr(n, "is_causal", int64_t{2}); });
  expect_error({q, k, v}, [](auto& n) { set_attr(n, "softcap", -1.0f); });
  expect_error({q, k, v}, [](auto& n) { set_attr(n, "softmax_precision", int64_t{7}); });
  expect_error({q, k, v}, [](auto& n) { set_attr(n, "q_num_heads", int64_t{4}); });  // contradicts 4-D Q
}

TEST_CASE("Attention-24's nonpad_kv_seqlen hides padded keys and moves the causal diagonal to the end",
          "[eval][attention]") {
  // Equal scores: each query averages the values it may see. 2 queries, 4
  // keys, 3 of them valid: offset 3 - 2 = 1, so query 0 sees keys 0..1 and
  // query 1 keys 0..2; key 3 is padding.
  const Tensor q = f32({1, 1, 2, 1}, {0, 0}), k = f32({1, 1, 4, 1}, {0, 0, 0, 0});
  const Tensor v = f32({1, 1, 4, 1}, {2, 4, 6, 100});
  const Tensor len = Tensor::from_f64(DType::int64, {1}, {3});
  const auto causal = [](onnx::NodeProto& n) { set_attr(n, "is_causal", int64_t{1}); };
  CHECK(run_node(24, "Attention", {q, k, v, Tensor(), Tensor(), Tensor(), len}, {"y"}, causal)[0].to_f64() ==
        std::vector<double>{3, 4});
  // Without is_causal only the padding is hidden.
  CHECK(run_node(24, "Attention", {q, k, v, Tensor(), Tensor(), Tensor(), len}, {"y"})[0].to_f64() ==
        std::vector<double>{4, 4});
  // One valid key for two queries: offset -1, query 0 sees nothing (a zero row), query 1 key 0.
  const Tensor one = Tensor::from_f64(DType::int64, {1}, {1});
  CHECK(run_node(24, "Attention", {q, k, v, Tensor(), Tensor(), Tensor(), one}, {"y"}, causal)[0].to_f64() ==
        std::vector<double>{0, 2});
}

TEST_CASE("Attention-24 pads a short attn_mask with -inf, a last dimension of 1 still broadcasts",
          "[eval][attention]") {
  const Tensor q = f32({1, 1, 1, 1}, {0}), k = f32({1, 1, 3, 1}, {0, 0, 0}), v = f32({1, 1, 3, 1}, {2, 4, 9});
  // Two mask columns for three keys: the third is hidden.
  CHECK(run_node(24, "Attention", {q, k, v, f32({1, 2}, {0, 0})}, {"y"})[0].to_f64() == std::vector<double>{3});
  CHECK(run_node(24, "Attention", {q, k, v, f32({1, 1}, {0})}, {"y"})[0].to_f64() == std::vector<double>{5});
  const Tensor bool_mask = Tensor::from_f64(DType::boolean, {1, 2}, {0, 1});
  CHECK(run_node(24, "Attention", {q, k, v, bool_mask}, {"y"})[0].to_f64() == std::vector<double>{4});
  // It must cover the valid keys nonpad_kv_seqlen names.
  const Tensor len = Tensor::from_f64(DType::int64, {1}, {3});
  CHECK_THROWS_AS(run_node(24, "Attention", {q, k, v, f32({1, 2}, {0, 0}), Tensor(), Tensor(), len}, {"y"}),
                  bnorm::Error);
}

TEST_CASE("Attention-25's window bounds the keys each query sees, composed with is_causal", "[eval][attention]") {
  // The spec's picture: 4 queries, 6 keys, left 2, right 1, offset 0.
  const Tensor q = f32({1, 1, 4, 1}, {0, 0, 0, 0}), k = f32({1, 1, 6, 1}, std::vector<double>(6, 0));
  const Tensor v = f32({1, 1, 6, 1}, {1, 2, 4, 8, 16, 32});
  const auto window = [](int64_t left, int64_t right, bool causal) {
    return [=](onnx::NodeProto& n) {
      set_attr(n, "left_window_size", left);
      set_attr(n, "right_window_size", right);
      if (causal) set_attr(n, "is_causal", int64_t{1});
    };
  };
  const auto rounded = [](std::vector<double> x) { return f32({int64_t(x.size())}, x).to_f64(); };
  // q0 {k0,k1}, q1 {k0..k2}, q2 {k0..k3}, q3 {k1..k4}.
  CHECK(run_node(25, "Attention", {q, k, v}, {"y"}, window(2, 1, false))[0].to_f64() ==
        rounded({1.5, 7.0 / 3, 15.0 / 4, 30.0 / 4}));
  // With is_causal the right side stops at the query.
  CHECK(run_node(25, "Attention", {q, k, v}, {"y"}, window(2, 1, true))[0].to_f64() ==
        rounded({1, 1.5, 7.0 / 3, 14.0 / 3}));
  // The attributes are read from 25 on only; -2 is refused.
  CHECK(run_node(24, "Attention", {q, k, v}, {"y"}, window(0, 0, false))[0].to_f64() ==
        std::vector<double>(4, 63.0 / 6));
  CHECK_THROWS_AS(run_node(25, "Attention", {q, k, v}, {"y"}, window(-2, 0, false)), bnorm::Error);
}

TEST_CASE("Attention-24 and 25 match the reference with nonpad_kv_seqlen, masks, windows and every mode",
          "[eval][attention]") {
  uint32_t seed = 101;
  for (int mode = 0; mode < 4; ++mode) {
    RefArgs a;
    a.opset = mode < 2 ? 24 : 25;
    a.q = random_tensor(DType::float32, {2, 4, 3, 5}, seed++);
    a.k = random_tensor(DType::float32, {2, 2, 7, 5}, seed++);
    a.v = random_tensor(DType::float32, {2, 2, 7, 6}, seed++);
    a.nonpad = {5, 2};
    a.mask = mode % 2 ? random_tensor(DType::float32, {2, 1, 3, 5}, seed++)
                      : Tensor::from_f64(DType::boolean, {3, 7}, {1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1,
                                                                  1, 1, 0, 1, 1, 1, 0});
    a.causal = mode != 1;
    a.softcap = mode == 1 ? 0.5 : 0;
    if (a.opset == 25) {
      a.left = mode == 2 ? 1 : 3;
      a.right = mode == 2 ? 0 : -1;
    }
    a.mode = mode;
    check_against_reference(a);
  }
}

TEST_CASE("Attention-24 refuses nonpad_kv_seqlen with a past, and lengths it cannot hold", "[eval][attention]") {
  const Tensor q = f32({1, 1, 1, 1}, {0}), k = f32({1, 1, 2, 1}, {0, 0}), v = k;
  const auto refused = [&](const Tensor& len, const Tensor& past) {
    CHECK_THROWS_AS(run_node(24, "Attention", {q, k, v, Tensor(), past, past, len}, {"y"}), bnorm::Error);
  };
  refused(Tensor::from_f64(DType::int64, {1}, {1}), f32({1, 1, 1, 1}, {0}));
  refused(Tensor::from_f64(DType::int64, {1}, {3}), Tensor());   // more than the keys
  refused(Tensor::from_f64(DType::int64, {1}, {-1}), Tensor());
  refused(Tensor::from_f64(DType::int32, {1}, {1}), Tensor());   // not int64
  refused(Tensor::from_f64(DType::int64, {2}, {1, 1}), Tensor()); // not (batch,)
  CHECK_THROWS_AS(run_node(23, "Attention", {q, k, v, Tensor(), Tensor(), Tensor(), Tensor::from_f64(DType::int64, {1}, {1})},
                           {"y"}),
                  bnorm::Error);  // Attention-23 has six inputs
}
