// LinearAttention-27 through bnorm::evaluate: a hand-computed case, and cases whose expected numbers come from a
// float64 numpy reference run by hand (the recurrence written token by token from the Changelog's formulas,
// checked against ONNX's node-test data first); inputs are multiples of 1/8, exact in every float type.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

Attrs la_attrs(int64_t q_heads, int64_t kv_heads, const std::string& rule, float scale = 0) {
  return [=](onnx::NodeProto& n) {
    set_attr(n, "q_num_heads", q_heads);
    set_attr(n, "kv_num_heads", kv_heads);
    if (!rule.empty()) set_string(n, "update_rule", rule);
    if (scale != 0) set_attr(n, "scale", scale);
  };
}

std::vector<Tensor> run_la(const std::vector<Tensor>& in, const Attrs& attrs) {
  return run_node(27, "LinearAttention", in, {"output", "present_state"}, attrs);
}

// `want` rounded once to `t`, against `got` (float64 sums in another order may differ in the last bit).
void check_rounded(const Tensor& got, DType t, const std::vector<double>& want) {
  CHECK(got.dtype == t);
  check_close(got.to_f64(), Tensor::from_f64(t, got.dims, want).to_f64(), 1e-7, 1e-6);
}

// Case A: MQA (2 query heads share 1 key/value head), d_k = d_v = 2, T = 2, with past_state, decay per key
// dimension, beta per head.
struct CaseA {
  DType t = DType::float32;
  Tensor q = tensor_of(t, {1, 2, 4}, {-1.0, 0.375, -0.625, -0.375, 1.0, -0.75, 0.25, -0.375});
  Tensor k = tensor_of(t, {1, 2, 2}, {-0.125, 0.875, -0.625, 0.625});
  Tensor v = tensor_of(t, {1, 2, 2}, {0.5, -1.0, 0.875, -0.625});
  Tensor decay = tensor_of(t, {1, 2, 2}, {-0.375, -0.5, 1.0, 1.0});
  Tensor beta = tensor_of(t, {1, 2, 1}, {0.375, 0.25});
  Tensor past = f32({1, 1, 2, 2}, {0.25, -0.625, -0.25, 0.75});
  explicit CaseA(DType type = DType::float32) : t(type) {}
  std::vector<Tensor> inputs() const { return {q, k, v, past, decay, beta}; }
};

struct Expected {
  const char* rule;
  std::vector<double> out, state;
};

const Expected kCaseA[] = {
    {"linear",
     {-0.08286407592029853, 0.3204077602251543, -0.13258252147247765, 0.2541164994889155, -0.6435776563143186,
      0.19611164634470651, -0.2582597032849304, 0.11739077422042292},
     {-0.359375, -0.109375, 0.734375, -0.515625}},
    {"gated",
     {-0.0015005294124329585, 0.10395710464113754, -0.12411612017670842, 0.2459922855638453, -0.8786956897388655,
      0.5035957858617812, -0.3952056213106338, 0.32909235298826156},
     {-0.24970612492063476, -0.43724349483775826, 1.3239429822758002, -1.5325806468765684}},
    {"delta",
     {-0.15295327346955104, 0.4324253170226204, -0.09391261937633834, 0.19231370953169283, -0.04162625063808747,
      -0.27198811195668693, -0.030847447012517383, -0.06965289337346774},
     {0.0567626953125, -0.37528228759765625, 0.1541748046875, 0.01248931884765625}},
    {"gated_delta",
     {-0.08310561780604703, 0.2499352542346904, -0.07909262313195584, 0.16545261682257476, -0.014365266281460055,
      -0.4313858130517845, -0.04717764918892201, -0.07519984884106756},
     {0.2262459764907308, -0.7947487503885786, 0.32874870785743004, -0.2462361106072006}},
};

}  // namespace

TEST_CASE("LinearAttention's linear rule accumulates k (x) v and reads it with q: a hand-computed case",
          "[eval][linear_attention]") {
  // One head, d_k = d_v = 1 (default scale 1): S = 2 then 5, o = 1 * 2 and 2 * 5.
  const Tensor q = f32({1, 2, 1}, {1, 2}), k = f32({1, 2, 1}, {1, 1}), v = f32({1, 2, 1}, {2, 3});
  const auto got = run_la({q, k, v}, la_attrs(1, 1, "linear"));
  CHECK(got[0].to_f64() == std::vector<double>{2, 10});
  CHECK(got[1].dims == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(got[1].to_f64() == std::vector<double>{5});
  // An explicit scale replaces 1/sqrt(d_k); a decay or beta the rule does not use is not read.
  const auto scaled = run_la({q, k, v, Tensor(), f32({1, 2, 7}, std::vector<double>(14, 9))},
                             la_attrs(1, 1, "linear", 0.5f));
  CHECK(scaled[0].to_f64() == std::vector<double>{1, 5});
  CHECK(run_la({q, k, v}, la_attrs(1, 1, "linear", -1.0f))[0].to_f64() == std::vector<double>{-2, -10});
}

TEST_CASE("LinearAttention matches a float64 reference for each update rule, MQA heads and a past_state",
          "[eval][linear_attention]") {
  const CaseA a;
  for (const Expected& e : kCaseA) {
    INFO(e.rule);
    const auto got = run_la(a.inputs(), la_attrs(2, 1, e.rule));
    check_rounded(got[0], DType::float32, e.out);
    CHECK(got[1].dims == std::vector<int64_t>{1, 1, 2, 2});
    check_rounded(got[1], DType::float32, e.state);
  }
  // gated_delta is the default rule.
  const auto by_default = run_la(a.inputs(), la_attrs(2, 1, ""));
  CHECK(by_default[0].to_f64() == run_la(a.inputs(), la_attrs(2, 1, "gated_delta"))[0].to_f64());
}

TEST_CASE("LinearAttention shares each key/value head among its query group (GQA), per-head decay, beta (B, T, 1)",
          "[eval][linear_attention]") {
  // 4 query heads over 2 key/value heads, d_k = 2, d_v = 1, no past_state, scale 0.5.
  const Tensor q = f32({1, 2, 8}, {-1.0, 0.875, -0.75, -0.375, -0.375, -0.25, -0.125, 0.5, 0.375, -0.5, 0.125, 0.625,
                                   1.0, -0.125, 0.5, 0.375});
  const Tensor k = f32({1, 2, 4}, {1.0, 0.875, 1.0, -1.0, 0.5, -0.375, -1.0, 0.625});
  const Tensor v = f32({1, 2, 2}, {-0.25, 0.25, -0.75, -0.875});
  const Tensor decay = f32({1, 2, 2}, {0.5, 0.875, -0.5, 1.0}), beta = f32({1, 2, 1}, {0.625, 1.0});
  const auto got = run_la({q, k, v, Tensor(), decay, beta}, la_attrs(4, 2, "gated_delta", 0.5f));
  check_rounded(got[0], DType::float32,
                {0.018310546875, 0.084228515625, -0.009765625, -0.048828125, -0.13460929979227887,
                 0.031216381352340773, 0.33853630570444443, 0.05109096571837311});
  CHECK(got[1].dims == std::vector<int64_t>{1, 2, 2, 1});
  check_rounded(got[1], DType::float32,
                {-0.4616260829911842, 0.1922176369257273, 0.6095427901895465, -0.5402385697547387});
}

TEST_CASE("LinearAttention's decode step (T = 1) from present_state continues the prefill",
          "[eval][linear_attention]") {
  const Tensor q = random_tensor(DType::float32, {2, 3, 12}, 1), k = random_tensor(DType::float32, {2, 3, 6}, 2);
  const Tensor v = random_tensor(DType::float32, {2, 3, 8}, 3), decay = random_tensor(DType::float32, {2, 3, 6}, 4);
  const Tensor beta = random_tensor(DType::float32, {2, 3, 2}, 0, 1, 5);
  const auto slice = [](const Tensor& t, int64_t from, int64_t to) {
    const std::vector<double> x = t.to_f64();
    const int64_t w = t.dims[2], T = t.dims[1];
    std::vector<double> out;
    for (int64_t b = 0; b < t.dims[0]; ++b)
      for (int64_t s = from; s < to; ++s)
        for (int64_t e = 0; e < w; ++e) out.push_back(x[(b * T + s) * w + e]);
    return f32({t.dims[0], to - from, w}, out);
  };
  const Attrs attrs = la_attrs(4, 2, "gated_delta");
  const auto whole = run_la({q, k, v, Tensor(), decay, beta}, attrs);
  const auto first = run_la({slice(q, 0, 2), slice(k, 0, 2), slice(v, 0, 2), Tensor(), slice(decay, 0, 2),
                             slice(beta, 0, 2)}, attrs);
  const auto step = run_la({slice(q, 2, 3), slice(k, 2, 3), slice(v, 2, 3), first[1], slice(decay, 2, 3),
                            slice(beta, 2, 3)}, attrs);
  CHECK(step[0].dims == std::vector<int64_t>{2, 1, 16});  // 4 query heads of d_v = 4
  // The state passes through float32 between the calls: equal to float32 rounding.
  check_close(step[0].to_f64(), slice(whole[0], 2, 3).to_f64(), 1e-6, 1e-5);
  check_close(step[1].to_f64(), whole[1].to_f64(), 1e-6, 1e-5);
}

TEST_CASE("LinearAttention rounds float16 once, present_state has past_state's type, else query's",
          "[eval][linear_attention]") {
  const CaseA a(DType::float16);
  const Expected& e = kCaseA[3];
  auto got = run_la(a.inputs(), la_attrs(2, 1, e.rule));
  check_rounded(got[0], DType::float16, e.out);
  check_rounded(got[1], DType::float32, e.state);  // past_state is float32 (S), query float16 (T)
  const Tensor past16 = Tensor::from_f64(DType::float16, a.past.dims, a.past.to_f64());
  got = run_la({a.q, a.k, a.v, past16, a.decay, a.beta}, la_attrs(2, 1, e.rule));
  check_rounded(got[1], DType::float16, e.state);
  got = run_la({a.q, a.k, a.v, Tensor(), a.decay, a.beta}, la_attrs(2, 1, e.rule));
  CHECK(got[1].dtype == DType::float16);
  const CaseA b(DType::bfloat16);
  got = run_la(b.inputs(), la_attrs(2, 1, e.rule));
  check_rounded(got[0], DType::bfloat16, e.out);
}

TEST_CASE("LinearAttention refuses what the schema does not allow, with a message", "[eval][linear_attention]") {
  const CaseA a;
  const auto expect_error = [](const std::vector<Tensor>& in, const Attrs& attrs, const std::string& says) {
    try {
      run_la(in, attrs);
      FAIL("no error");
    } catch (const bnorm::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(says));
    }
  };
  const auto heads = [](int64_t q, int64_t kv, bool with_q = true) {
    return [=](onnx::NodeProto& n) {
      if (with_q) set_attr(n, "q_num_heads", q);
      set_attr(n, "kv_num_heads", kv);
    };
  };
  expect_error(a.inputs(), heads(2, 1, false), "'q_num_heads' is required");
  expect_error(a.inputs(), heads(3, 2), "not a multiple of kv_num_heads");
  expect_error(a.inputs(), heads(0, 1), "must be positive");
  expect_error(a.inputs(), la_attrs(2, 1, "softmax"), "update_rule 'softmax'");
  expect_error({a.q, a.k, a.v}, la_attrs(2, 1, "gated"), "needs the input 'decay'");
  expect_error({a.q, a.k, a.v, Tensor(), a.decay}, la_attrs(2, 1, "delta"), "needs the input 'beta'");
  expect_error({a.q, a.k, a.v, a.past, a.decay, f32({1, 2, 3}, std::vector<double>(6, 0.5))}, la_attrs(2, 1, ""),
               "beta is [1, 2, 3]");
  expect_error({a.q, a.k, a.v, a.past, f32({1, 2, 3}, std::vector<double>(6, 0)), a.beta}, la_attrs(2, 1, ""),
               "decay is [1, 2, 3]");
  expect_error({a.q, a.k, a.v, f32({1, 1, 2, 3}, std::vector<double>(6, 0)), a.decay, a.beta}, la_attrs(2, 1, ""),
               "past_state is [1, 1, 2, 3]");
  expect_error({a.q, f32({1, 2, 3}, std::vector<double>(6, 0)), a.v}, la_attrs(2, 1, "linear"), "key's last dimension");
  expect_error({a.q, a.k, f32({1, 3, 2}, std::vector<double>(6, 0))}, la_attrs(2, 1, "linear"), "sequence length");
  expect_error({f32({1, 2, 2, 2}, std::vector<double>(8, 0)), a.k, a.v}, la_attrs(2, 1, "linear"), "must be 3-D");
  const Tensor q64 = f64(a.q.dims, a.q.to_f64()), k64 = f64(a.k.dims, a.k.to_f64()), v64 = f64(a.v.dims, a.v.to_f64());
  expect_error({q64, k64, v64}, la_attrs(2, 1, "linear"), "float, float16, bfloat16");
  expect_error({a.q, a.k, v64}, la_attrs(2, 1, "linear"), "share one of");
  const Tensor b16 = Tensor::from_f64(DType::float16, a.beta.dims, a.beta.to_f64());
  expect_error({a.q, a.k, a.v, a.past, a.decay, b16}, la_attrs(2, 1, ""), "beta must have query's type");
  expect_error({a.q, a.k, a.v, f64(a.past.dims, a.past.to_f64()), a.decay, a.beta}, la_attrs(2, 1, ""),
               "past_state of type");
}
