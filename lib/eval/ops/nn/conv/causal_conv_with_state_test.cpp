// CausalConvWithState-27 through bnorm::evaluate: hand-computed cases, and cases whose expected numbers come
// from a float64 numpy reference run by hand (past_state or zeros concatenated before the input, each channel
// correlated with its kernel, bias, SiLU; checked against ONNX's node-test data first). Inputs are multiples
// of 1/8, exact in every float type.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

std::vector<Tensor> run_cc(const std::vector<Tensor>& in, const std::string& activation = {}) {
  return run_node(27, "CausalConvWithState", in, {"output", "present_state"}, [&](onnx::NodeProto& n) {
    if (!activation.empty()) set_string(n, "activation", activation);
  });
}

// B = 2, C = 2, L = 3, k = 3.
struct Case {
  DType t = DType::float32;
  Tensor x = tensor_of(t, {2, 2, 3}, {0.375, 0.75, -0.625, 0.875, 0.75, 0.625, 0.625, -1.0, -0.75, -1.0, 0.75, -0.375});
  Tensor w = tensor_of(t, {2, 1, 3}, {-0.375, 0.75, -0.5, 1.0, -0.375, 0.125});
  Tensor bias = tensor_of(t, {2}, {0.75, 0.625});
  Tensor past = tensor_of(t, {2, 2, 2}, {-0.125, -0.375, 0.875, 0.625, 0.375, 0.625, -0.75, -0.875});
  explicit Case(DType type = DType::float32) : t(type) {}
};

const std::vector<double> kNone = {0.328125, 0.796875, 1.484375, 1.375,    1.015625, 1.296875,
                                   0.765625, 1.484375, 0.140625, 0.078125, 0.21875,  -0.703125};
const std::vector<double> kSilu = {0.1907400766176653,  0.5492904133759022,  1.2101107263818751,
                                   1.097506819391979,   0.7455901445079984,  1.0184470658388112,
                                   0.5225955154094356,  1.2101107263818751,  0.07524821652561725,
                                   0.04058760327750726, 0.12129041421009347, -0.23281856692663463};
const std::vector<double> kSiluNoBiasNoPast = {
    -0.08498659650288491, -0.04467934228721962, 0.49626462887336303, 0.057675244744640156,
    -0.10351711070264663, 0.44472943221171485,  -0.13203269837943385, 0.7022180800462989,
    -0.21462296093543276, -0.05859882832828047, 0.2883224322731561,  -0.2782019205168383};
// The last two input positions of each row (L = 3 >= k - 1): past_state does not reach present_state.
const std::vector<double> kState = {0.75, -0.625, 0.75, 0.625, -1.0, -0.75, 0.75, -0.375};

void check_rounded(const Tensor& got, DType t, const std::vector<double>& want) {
  CHECK(got.dtype == t);
  check_close(got.to_f64(), Tensor::from_f64(t, got.dims, want).to_f64(), 1e-7, 1e-6);
}

}  // namespace

TEST_CASE("CausalConvWithState correlates zeros ++ input with the kernel: a hand-computed case",
          "[eval][causal_conv_with_state]") {
  // p = 0 0 1 2 3 4, w = 1 2 3: y = 3, 8, 14, 20; the last k - 1 = 2 positions are 3 4.
  const auto got = run_cc({f32({1, 1, 4}, {1, 2, 3, 4}), f32({1, 1, 3}, {1, 2, 3})});
  CHECK(got[0].to_f64() == std::vector<double>{3, 8, 14, 20});
  CHECK(got[1].dims == std::vector<int64_t>{1, 1, 2});
  CHECK(got[1].to_f64() == std::vector<double>{3, 4});
}

TEST_CASE("CausalConvWithState matches a float64 reference with bias, past_state and SiLU",
          "[eval][causal_conv_with_state]") {
  const Case c;
  auto got = run_cc({c.x, c.w, c.bias, c.past});
  check_rounded(got[0], DType::float32, kNone);
  CHECK(got[1].dims == std::vector<int64_t>{2, 2, 2});
  CHECK(got[1].to_f64() == kState);
  CHECK(run_cc({c.x, c.w, c.bias, c.past}, "none")[0].to_f64() == got[0].to_f64());
  got = run_cc({c.x, c.w, c.bias, c.past}, "silu");
  check_rounded(got[0], DType::float32, kSilu);
  // 'swish' is another name for 'silu'.
  CHECK(run_cc({c.x, c.w, c.bias, c.past}, "swish")[0].to_f64() == got[0].to_f64());
  got = run_cc({c.x, c.w}, "silu");
  check_rounded(got[0], DType::float32, kSiluNoBiasNoPast);
  CHECK(got[1].to_f64() == kState);
}

TEST_CASE("CausalConvWithState's decode step (L = 1) and an input shorter than k - 1 carry the state",
          "[eval][causal_conv_with_state]") {
  // One channel, w = 1 2 3 4 (k = 4), past 5 6 7, input 1: y = 5 + 12 + 21 + 4, state 6 7 1.
  const Tensor w = f32({1, 1, 4}, {1, 2, 3, 4});
  auto got = run_cc({f32({1, 1, 1}, {1}), w, f32({1}, {0.5}), f32({1, 1, 3}, {5, 6, 7})});
  CHECK(got[0].to_f64() == std::vector<double>{42.5});
  CHECK(got[1].to_f64() == std::vector<double>{6, 7, 1});
  // Without past_state, input 1 2: p = 0 0 0 1 2, y = 4, 3 + 8; the state keeps a zero.
  got = run_cc({f32({1, 1, 2}, {1, 2}), w});
  CHECK(got[0].to_f64() == std::vector<double>{4, 11});
  CHECK(got[1].to_f64() == std::vector<double>{0, 1, 2});
  // An empty input passes the state through; k = 1 carries nothing.
  got = run_cc({f32({1, 1, 0}, {}), w, Tensor(), f32({1, 1, 3}, {5, 6, 7})});
  CHECK(got[0].dims == std::vector<int64_t>{1, 1, 0});
  CHECK(got[1].to_f64() == std::vector<double>{5, 6, 7});
  got = run_cc({f32({1, 2, 2}, {1, 2, 3, 4}), f32({2, 1, 1}, {2, -1})});
  CHECK(got[0].to_f64() == std::vector<double>{2, 4, -3, -4});
  CHECK(got[1].dims == std::vector<int64_t>{1, 2, 0});
}

TEST_CASE("CausalConvWithState run in two calls equals one call over the whole input",
          "[eval][causal_conv_with_state]") {
  const Tensor x = random_tensor(DType::float32, {2, 3, 7}, 1), w = random_tensor(DType::float32, {3, 1, 4}, 2);
  const Tensor bias = random_tensor(DType::float32, {3}, 3);
  const auto part = [&](int64_t from, int64_t to) {
    const std::vector<double> v = x.to_f64();
    std::vector<double> out;
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t t = from; t < to; ++t) out.push_back(v[r * 7 + t]);
    return f32({2, 3, to - from}, out);
  };
  const auto whole = run_cc({x, w, bias}, "silu");
  const auto first = run_cc({part(0, 5), w, bias}, "silu");
  const auto second = run_cc({part(5, 7), w, bias, first[1]}, "silu");
  CHECK(second[1].to_f64() == whole[1].to_f64());
  const std::vector<double> all = whole[0].to_f64(), a = first[0].to_f64(), b = second[0].to_f64();
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t t = 0; t < 7; ++t) CHECK(all[r * 7 + t] == (t < 5 ? a[r * 5 + t] : b[r * 2 + t - 5]));
  }
}

TEST_CASE("CausalConvWithState rounds float16 and bfloat16 once", "[eval][causal_conv_with_state]") {
  for (DType t : {DType::float16, DType::bfloat16}) {
    const Case c(t);
    const auto got = run_cc({c.x, c.w, c.bias, c.past}, "silu");
    check_rounded(got[0], t, kSilu);
    CHECK(got[1].dtype == t);
    CHECK(got[1].to_f64() == kState);
  }
}

TEST_CASE("CausalConvWithState refuses what the schema does not allow, with a message",
          "[eval][causal_conv_with_state]") {
  const Case c;
  const auto expect_error = [](const std::vector<Tensor>& in, const std::string& act, const std::string& says) {
    try {
      run_cc(in, act);
      FAIL("no error");
    } catch (const bnorm::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(says));
    }
  };
  expect_error({c.x, c.w}, "relu", "activation 'relu'");
  expect_error({c.x, f32({2, 2, 3}, std::vector<double>(12, 1))}, "", "weight is [2, 2, 3]");
  expect_error({c.x, f32({2, 1, 0}, {})}, "", "k >= 1");
  expect_error({c.x, c.w, f32({3}, {1, 2, 3})}, "", "bias is [3]");
  expect_error({c.x, c.w, Tensor(), f32({2, 2, 3}, std::vector<double>(12, 1))}, "", "past_state is [2, 2, 3]");
  expect_error({f32({2, 3}, std::vector<double>(6, 1)), c.w}, "", "must be 3-D");
  expect_error({f64(c.x.dims, c.x.to_f64()), f64(c.w.dims, c.w.to_f64())}, "", "takes float, float16 or bfloat16");
  expect_error({c.x, f64(c.w.dims, c.w.to_f64())}, "", "weight has type");
}
