// bnorm upgrade below opset 27 of the sequence-model ops of opset 27
// (issue 29): CausalConvWithState as Concat or Pad, Conv and Slice, and
// LinearAttention as a Scan over the sequence. Both agree with the op's
// evaluation within rounding (the op rounds once); ONNX's node tests for
// them, converted and run against ONNX's data: upgrade_opsets_24_28_models_test.cpp.
#include <catch2/catch.hpp>

#include "support/opsets_24_28_support.h"

using namespace bnorm;
using namespace bnorm::test;

TEST_CASE("CausalConvWithState-27 below 27 is Concat or Pad, Conv and Slice: the op's numbers within rounding, "
          "with and without a past, a bias, SiLU, k = 1", "[upgrade][opset28]") {
  struct Case {
    int64_t k;
    bool past, bias;
    const char* act;
  };
  for (const Case c : {Case{3, false, false, "none"}, Case{3, true, true, "silu"}, Case{4, true, false, "swish"},
                       Case{1, false, true, "none"}, Case{2, false, true, "silu"}}) {
    INFO("k " << c.k << " past " << c.past << " bias " << c.bias << " " << c.act);
    Model m = net(27);
    input(m, "x", DType::float32, {2, 3, 5});
    constant(m, "w", DType::float32, {3, 1, c.k}, 0.3);
    std::vector<std::string> in{"x", "w", c.bias ? "b" : "", c.past ? "past" : ""};
    if (c.bias) constant(m, "b", DType::float32, {3}, -0.2);
    if (c.past) input(m, "past", DType::float32, {2, 3, c.k - 1});
    while (in.back().empty()) in.pop_back();
    auto& n = node(m, "CausalConvWithState", in, {"y", "state"}, "conv");
    set_attr(n, "activation", c.act);
    add_output(g(m), "y", DType::float32, {2, 3, 5});
    add_output(g(m), "state", DType::float32, {2, 3, c.k - 1});
    for (const int64_t to : {26, 17, 11}) {
      INFO("to " << to);
      const Model low = converted(m, to);
      CHECK_FALSE(has_op(low, "CausalConvWithState"));
      CHECK(has_op(low, "Conv"));
      expect_same_outputs(m, low);
    }
  }
  // Pad with its pads as an input starts at 11.
  Model m = net(27);
  input(m, "x", DType::float32, {1, 2, 4});
  constant(m, "w", DType::float32, {2, 1, 2}, 0.5);
  node(m, "CausalConvWithState", {"x", "w"}, {"y"}, "conv");
  add_output(g(m), "y", DType::float32, {1, 2, 4});
  const std::string e = upgrade_error_of(m, 10);
  INFO(e);
  CHECK(e.find("'conv'") != std::string::npos);
  CHECK(e.find("Pad with its pads as an input") != std::string::npos);
}

TEST_CASE("LinearAttention-27 below 27 is a Scan over the sequence: the op's numbers within rounding at every rule, "
          "down to 9", "[upgrade][opset28]") {
  for (const char* rule : {"linear", "gated", "delta", "gated_delta"}) {
    INFO(rule);
    Model m = net(27);
    input(m, "q", DType::float32, {2, 5, 8});  // 4 query heads of 2
    input(m, "k", DType::float32, {2, 5, 4});  // 2 key/value heads of 2
    input(m, "v", DType::float32, {2, 5, 6});  // values of 3
    input(m, "decay", DType::float32, {2, 5, 2});  // per head
    input(m, "beta", DType::float32, {2, 5, 1});
    auto& n = node(m, "LinearAttention", {"q", "k", "v", "", "decay", "beta"}, {"y", "state"}, "la");
    set_attr(n, "q_num_heads", int64_t{4});
    set_attr(n, "kv_num_heads", int64_t{2});
    set_attr(n, "update_rule", rule);
    add_output(g(m), "y", DType::float32, {2, 5, 12});
    add_output(g(m), "state", DType::float32, {2, 2, 2, 3});
    auto inputs = random_inputs(m, 13, {});
    // Keep the decay negative (log space) and beta in (0, 1): the recurrence stays bounded.
    inputs["decay"] = random_tensor(DType::float32, {2, 5, 2}, -0.5, -0.05, 14);
    inputs["decay"].name = "decay";
    inputs["beta"] = random_tensor(DType::float32, {2, 5, 1}, 0.1, 0.9, 15);
    inputs["beta"].name = "beta";
    for (const int64_t to : {26, 17, 9}) {
      INFO("to " << to);
      const Model low = converted(m, to);
      CHECK_FALSE(has_op(low, "LinearAttention"));
      CHECK(has_op(low, "Scan"));
      expect_close_output(m, low, inputs, "y");
      expect_close_output(m, low, inputs, "state");
    }
  }
  // Scan's axes start at 9.
  Model m = net(27);
  for (const char* v : {"q", "k", "v"}) input(m, v, DType::float32, {1, 2, 4});
  auto& n = node(m, "LinearAttention", {"q", "k", "v"}, {"y"}, "la");
  set_attr(n, "q_num_heads", int64_t{2});
  set_attr(n, "kv_num_heads", int64_t{2});
  set_attr(n, "update_rule", "linear");
  add_output(g(m), "y", DType::float32, {1, 2, 4});
  const std::string e = upgrade_error_of(m, 8);
  INFO(e);
  CHECK(e.find("'la'") != std::string::npos);
  CHECK(e.find("Scan with its axes") != std::string::npos);
}
