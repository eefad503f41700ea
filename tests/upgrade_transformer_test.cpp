// A transformer decoder block written at opset 28 (issue 29's "done when"):
// RMSNormalization, a 3-D grouped-query causal Attention-24 with a KV cache
// and a bool padding mask, and a SwiGLU-28 MLP, taken by `bnorm upgrade
// --verify` down to 23, 21 and 17 and back up to 28. `--verify` runs the
// original and the converted model on the same inputs through bnorm's
// evaluator (Attention in float64, rounded once) and fails beyond rounding.
// Also: the Attention lowering below 23 on the cases the block does not
// reach (fully masked rows, softcap, qk_matmul_output, masks shorter than
// the keys).
#include <catch2/catch.hpp>

#include <limits>

#include "core/error.h"
#include "support/cli.h"
#include "support/opsets_24_28_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// x [1, 3, 16]: 4 query heads of 4, 2 key/value heads, 5 cached positions.
Model decoder_block(int64_t opset, bool mask) {
  Model m = net(opset);
  input(m, "x", DType::float32, {1, 3, 16});
  input(m, "past_k", DType::float32, {1, 2, 5, 4});
  input(m, "past_v", DType::float32, {1, 2, 5, 4});
  constant(m, "norm1", DType::float32, {16}, 0.9);
  constant(m, "norm2", DType::float32, {16}, 1.1);
  constant(m, "wq", DType::float32, {16, 16}, 0.011);
  constant(m, "wk", DType::float32, {16, 8}, -0.013);
  constant(m, "wv", DType::float32, {16, 8}, 0.017);
  constant(m, "wo", DType::float32, {16, 16}, 0.007);
  constant(m, "w_gate", DType::float32, {16, 32}, 0.005);
  constant(m, "w_up", DType::float32, {16, 32}, -0.006);
  constant(m, "w_down", DType::float32, {32, 16}, 0.004);
  node(m, "RMSNormalization", {"x", "norm1"}, {"h"}, "attn_norm");
  node(m, "MatMul", {"h", "wq"}, {"q"}, "q_proj");
  node(m, "MatMul", {"h", "wk"}, {"k"}, "k_proj");
  node(m, "MatMul", {"h", "wv"}, {"v"}, "v_proj");
  std::vector<std::string> in{"q", "k", "v", "", "past_k", "past_v"};
  if (mask) {
    input(m, "keep", DType::boolean, {1, 1, 1, 8});  // which of the 8 keys are not padding
    in[3] = "keep";
  }
  auto& a = node(m, "Attention", in, {"attn", "present_k", "present_v"}, "attn");
  set_attr(a, "q_num_heads", int64_t{4});
  set_attr(a, "kv_num_heads", int64_t{2});
  set_attr(a, "is_causal", int64_t{1});
  node(m, "MatMul", {"attn", "wo"}, {"o"}, "o_proj");
  node(m, "Add", {"x", "o"}, {"r"}, "residual1");
  node(m, "RMSNormalization", {"r", "norm2"}, {"h2"}, "mlp_norm");
  node(m, "MatMul", {"h2", "w_gate"}, {"gate"}, "gate_proj");
  node(m, "MatMul", {"h2", "w_up"}, {"up"}, "up_proj");
  node(m, "SwiGLU", {"gate", "up"}, {"act"}, "swiglu");
  node(m, "MatMul", {"act", "w_down"}, {"mlp"}, "down_proj");
  node(m, "Add", {"r", "mlp"}, {"y"}, "residual2");
  add_output(g(m), "y", DType::float32, {1, 3, 16});
  add_output(g(m), "present_k", DType::float32, {1, 2, 8, 4});
  add_output(g(m), "present_v", DType::float32, {1, 2, 8, 4});
  return m;
}

std::vector<std::string> upgrade_args(const std::filesystem::path& in, const std::filesystem::path& out, int64_t to) {
  return {"upgrade", in.string(), "-o", out.string(), "--to", std::to_string(to), "--verify"};
}

}  // namespace

TEST_CASE("a decoder block at 28 (RMSNormalization, 3-D GQA causal Attention-24 with a KV cache, SwiGLU-28) goes "
          "to 23, 21 and 17 and back to 28 under --verify", "[upgrade][opset28][cli]") {
  TempDir tmp;
  for (const bool mask : {false, true}) {
    INFO("with a padding mask: " << mask);
    Model block = decoder_block(28, mask);
    const auto at28 = tmp / (mask ? "block28_mask.onnx" : "block28.onnx");
    save_model(block, at28);
    for (const int64_t to : {23, 21, 17}) {
      INFO("28 -> " << to);
      const auto low = tmp / ("block_" + std::to_string(to) + (mask ? "_mask" : "") + ".onnx");
      const CliResult down = run_cli(upgrade_args(at28, low, to));
      INFO(down.out << down.err);
      REQUIRE(down.exit_code == 0);
      const Model m = load_model(low);
      CHECK(default_opset(m.proto) == to);
      CHECK_FALSE(has_op(m, "SwiGLU"));
      CHECK(has_op(m, "Attention") == (to == 23));
      CHECK(has_op(m, "RMSNormalization") == (to == 23));
      // And back up: the newest forms the target has (Attention-24 and the rest at 28 are not rebuilt).
      const auto up = tmp / ("block_" + std::to_string(to) + "_up" + (mask ? "_mask" : "") + ".onnx");
      const CliResult back = run_cli(upgrade_args(low, up, 28));
      INFO(back.out << back.err);
      CHECK(back.exit_code == 0);
      CHECK(default_opset(load_model(up).proto) == 28);
    }
  }
}

TEST_CASE("Attention lowered below 23: a row the mask hides entirely is zero, softcap and qk_matmul_output follow "
          "the node", "[upgrade][opset28]") {
  // 4-D, one head, 2 queries and 3 keys; the mask hides every key of query 0.
  Model m = net(24);
  input(m, "q", DType::float32, {1, 1, 2, 4});
  input(m, "k", DType::float32, {1, 1, 3, 4});
  input(m, "v", DType::float32, {1, 1, 3, 2});
  Tensor mask = Tensor::from_f64(DType::float32, {2, 3}, {-kInf, -kInf, -kInf, 0, -0.5, 0.25});
  mask.name = "mask";
  *g(m).add_initializer() = to_proto(mask);
  for (int mode = 0; mode < 4; ++mode) {
    INFO("qk_matmul_output_mode " << mode);
    Model c = m;
    auto& a = node(c, "Attention", {"q", "k", "v", "mask"}, {"y", "", "", "qk"}, "attn");
    set_attr(a, "softcap", 1.5f);
    set_attr(a, "qk_matmul_output_mode", int64_t{mode});
    add_output(g(c), "y", DType::float32, {1, 1, 2, 2});
    add_output(g(c), "qk", DType::float32, {1, 1, 2, 3});
    const Model low = converted(c, 21);
    CHECK_FALSE(has_op(low, "Attention"));
    CHECK(has_op(low, "Tanh"));
    const auto inputs = random_inputs(c, 5, {});
    const auto got = evaluate(low, inputs, EvalOptions{});
    // Query 0's row of Y is zero in both, not NaN.
    const std::vector<double> y = got.at("y").to_f64();
    CHECK(y[0] == 0.0);
    CHECK(y[1] == 0.0);
    expect_same_outputs(c, low);
    if (mode == 3) CHECK(got.at("qk").to_f64()[0] == 0.0);
  }
}

TEST_CASE("Attention-24's attn_mask known to be shorter than the keys is padded below 24 as 24 pads it",
          "[upgrade][opset28]") {
  for (const DType t : {DType::boolean, DType::float32}) {
    Model m = net(24);
    input(m, "q", DType::float32, {1, 1, 2, 4});
    input(m, "k", DType::float32, {1, 1, 3, 4});
    input(m, "v", DType::float32, {1, 1, 3, 4});
    input(m, "mask", t, {2, 2});
    node(m, "Attention", {"q", "k", "v", "mask"}, {"y"}, "attn");
    add_output(g(m), "y", DType::float32, {1, 1, 2, 4});
    auto inputs = random_inputs(m, 9, {});
    if (t == DType::boolean) {
      inputs["mask"] = Tensor::from_f64(DType::boolean, {2, 2}, {1, 0, 1, 1});
      inputs["mask"].name = "mask";
    }
    const Model at23 = converted(m, 23);
    CHECK(has_op(at23, "Pad"));
    expect_same_bits(m, at23, inputs);  // Attention-23 on the padded mask: the same float64 sums
    const Model at17 = converted(m, 17);
    CHECK_FALSE(has_op(at17, "Attention"));
    expect_close_output(m, at17, inputs, "y");
  }
}
