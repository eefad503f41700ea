// A transformer decoder block written at opset 28 (issue 29's "done when"):
// RMSNormalization, a 3-D grouped-query causal Attention-24 with a KV cache
// and a bool padding mask, and a SwiGLU-28 MLP, taken by `bnorm upgrade
// --verify` down to 23, 21 and 17 and back up to 28. `--verify` runs the
// original and the converted model on the same inputs through bnorm's
// evaluator (Attention in float64, rounded once) and fails beyond rounding.
// Also: Attention-24 and 25 going down (nonpad_kv_seqlen and the window
// folded into attn_mask), and the Attention lowering below 23 on the cases
// the block does not reach (fully masked rows, softcap, qk_matmul_output,
// masks shorter than the keys).
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

TEST_CASE("Attention-24 without nonpad_kv_seqlen is Attention-23: up and down with the same bits", "[upgrade][opset28]") {
  // Built at 23 (eval runs Attention-23; part 1 left Attention-24 out), taken to 24 and 25 and back.
  Model m = net(23);
  for (const char* v : {"q", "k", "v"}) input(m, v, DType::float32, {1, 2, 3, 4});
  auto& n = node(m, "Attention", {"q", "k", "v"}, {"y"}, "attn");
  set_attr(n, "is_causal", int64_t{1});
  add_output(g(m), "y", DType::float32, {1, 2, 3, 4});
  const auto in = random_inputs(m, 11, {});
  for (const int64_t to : {24, 25}) {
    INFO("to " << to);
    const Model up = converted(m, to);
    CHECK(default_opset(up.proto) == to);
    const Model back = converted(up, 23);
    CHECK(first_node(back, "Attention").input_size() == 3);
    expect_same_bits(m, back, in);
  }
}

TEST_CASE("Attention-24's nonpad_kv_seqlen becomes part of attn_mask at 23 (the same bits) and below 23 (within "
          "rounding), with is_causal's offset frontier, a bool, float or short mask", "[upgrade][opset28]") {
  // 3 queries, 5 keys; batch 3 with 5, 2 and 1 valid keys (offsets 2, -1, -2: rows hidden entirely).
  struct Case {
    bool causal;
    DType mask;  // undefined: none
    int64_t mask_len;
  };
  for (const Case c : {Case{false, DType::undefined, 5}, Case{true, DType::undefined, 5}, Case{true, DType::boolean, 5},
                       Case{true, DType::float32, 5}, Case{false, DType::boolean, 1}, Case{true, DType::boolean, 4}}) {
    INFO("causal " << c.causal << " mask " << static_cast<int>(c.mask) << " of " << c.mask_len << " keys");
    Model m = net(24);
    input(m, "q", DType::float32, {3, 2, 3, 4});
    for (const char* v : {"k", "v"}) input(m, v, DType::float32, {3, 2, 5, 4});
    input(m, "lens", DType::int64, {3});
    std::vector<std::string> in{"q", "k", "v", "", "", "", "lens"};
    if (c.mask != DType::undefined) {
      input(m, "mask", c.mask, {3, 1, 1, c.mask_len});
      in[3] = "mask";
    }
    auto& n = node(m, "Attention", in, {"y"}, "attn");
    if (c.causal) set_attr(n, "is_causal", int64_t{1});
    add_output(g(m), "y", DType::float32, {3, 2, 3, 4});
    auto inputs = random_inputs(m, 3, {});
    inputs["lens"] = Tensor::from_f64(DType::int64, {3}, {4, 2, 1});
    inputs["lens"].name = "lens";
    if (c.mask == DType::boolean) {
      std::vector<double> keep(static_cast<size_t>(3 * c.mask_len), 1.0);
      keep[1] = 0;  // batch 0 hides key 1
      inputs["mask"] = Tensor::from_f64(DType::boolean, {3, 1, 1, c.mask_len}, keep);
      inputs["mask"].name = "mask";
    }
    const Model at23 = converted(m, 23);
    CHECK(first_node(at23, "Attention").input_size() == 4);
    CHECK_FALSE(has_attr(first_node(at23, "Attention"), "is_causal"));
    expect_same_bits(m, at23, inputs);
    const Model at17 = converted(m, 17);
    CHECK_FALSE(has_op(at17, "Attention"));
    expect_close_output(m, at17, inputs, "y");
  }
  // With a past, the spec says not to: refused, naming it.
  Model p = net(24);
  for (const char* v : {"q", "k", "v", "pk", "pv"}) input(p, v, DType::float32, {1, 2, 3, 4});
  input(p, "lens", DType::int64, {1});
  node(p, "Attention", {"q", "k", "v", "", "pk", "pv", "lens"}, {"y"}, "attn");
  add_output(g(p), "y", DType::float32, {1, 2, 3, 4});
  for (const int64_t to : {23, 17}) {
    const std::string e = upgrade_error_of(p, to);
    INFO(e);
    CHECK(e.find("'attn'") != std::string::npos);
    CHECK(e.find("nonpad_kv_seqlen") != std::string::npos);
  }
}

TEST_CASE("Attention-25's window becomes part of attn_mask at 24 and 23 (the same bits) and below 23 (within "
          "rounding), with a past, nonpad_kv_seqlen, is_causal and masks", "[upgrade][opset28]") {
  struct Case {
    int64_t left, right;
    bool causal, past, nonpad;
    DType mask;
  };
  for (const Case c : {Case{2, 1, false, false, false, DType::undefined}, Case{1, -1, true, true, false, DType::boolean},
                       Case{-1, 0, false, true, false, DType::float32}, Case{0, 2, true, false, true, DType::undefined},
                       Case{3, 0, false, false, true, DType::boolean}}) {
    INFO("left " << c.left << " right " << c.right << " causal " << c.causal << " past " << c.past << " nonpad "
                 << c.nonpad);
    Model m = net(25);
    input(m, "q", DType::float32, {2, 2, 3, 4});
    for (const char* v : {"k", "v"}) input(m, v, DType::float32, {2, 2, 5, 4});
    std::vector<std::string> in{"q", "k", "v", "", "", ""};
    const int64_t total = c.past ? 7 : 5;
    if (c.mask != DType::undefined) {
      input(m, "mask", c.mask, {2, 1, 3, total});
      in[3] = "mask";
    }
    if (c.past) {
      input(m, "pk", DType::float32, {2, 2, 2, 4});
      input(m, "pv", DType::float32, {2, 2, 2, 4});
      in[4] = "pk";
      in[5] = "pv";
    }
    if (c.nonpad) {
      input(m, "lens", DType::int64, {2});
      in.push_back("lens");
    }
    auto& n = node(m, "Attention", in, {"y"}, "attn");
    set_attr(n, "left_window_size", c.left);
    set_attr(n, "right_window_size", c.right);
    if (c.causal) set_attr(n, "is_causal", int64_t{1});
    add_output(g(m), "y", DType::float32, {2, 2, 3, 4});
    auto inputs = random_inputs(m, 5, {});
    if (c.nonpad) {
      inputs["lens"] = Tensor::from_f64(DType::int64, {2}, {5, 2});
      inputs["lens"].name = "lens";
    }
    if (c.mask == DType::boolean) {
      std::vector<double> keep(static_cast<size_t>(2 * 3 * total), 1.0);
      keep[2] = 0;
      inputs["mask"] = Tensor::from_f64(DType::boolean, {2, 1, 3, total}, keep);
      inputs["mask"].name = "mask";
    }
    for (const int64_t to : {24, 23}) {
      const Model low = converted(m, to);
      CHECK_FALSE(has_attr(first_node(low, "Attention"), "left_window_size"));
      expect_same_bits(m, low, inputs);
    }
    const Model at17 = converted(m, 17);
    CHECK_FALSE(has_op(at17, "Attention"));
    expect_close_output(m, at17, inputs, "y");
  }
}
