// bnorm upgrade across the schema changes of opsets 24..28 (issue 29): every
// op version those opsets introduce, taken down to 23 (and 17 where the op
// exists there) and back up. The expected numbers are the original model's
// evaluation (part 1 checks eval's Swish, SwiGLU, Celu-28, TopK-24,
// Range-27 and Cast-25 against ONNX's node-test data); a converted model
// must give the same bits. Refusals are checked by their message.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "eval/backend/folders.h"
#include "support/cli.h"
#include "support/lower_support.h"
#include "support/test_graph.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// Values from -20 to 20 (sigmoid saturated at both ends), 0 and small ones.
std::vector<double> spread(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(-20.0 + 40.0 * static_cast<double>(i) / static_cast<double>(n - 1) + (i % 3) * 0.013);
  v[1] = 0.0;
  v[2] = -1e-3;
  v[3] = 1.0;
  return v;
}

std::map<std::string, Tensor> evaluated(const Model& m, const std::map<std::string, Tensor>& inputs) {
  return evaluate(m, inputs, EvalOptions{});
}

// `after` gives, on `inputs`, the bits `before` gives.
void expect_same_bits(const Model& before, const Model& after, const std::map<std::string, Tensor>& inputs) {
  const auto a = evaluated(before, inputs);
  const auto b = evaluated(after, inputs);
  REQUIRE(!a.empty());
  for (const auto& [name, t] : a) {
    INFO("output " << name);
    REQUIRE(b.count(name));
    CHECK(b.at(name).dtype == t.dtype);
    CHECK(b.at(name).dims == t.dims);
    CHECK(b.at(name).bytes == t.bytes);
  }
}

Model unary(int64_t opset, const std::string& op, DType t, const std::vector<int64_t>& dims) {
  Model m = net(opset);
  input(m, "x", t, dims);
  node(m, op, {"x"}, {"y"}, "n");
  add_output(g(m), "y", t, dims);
  return m;
}

std::map<std::string, Tensor> spread_inputs(const Model& m, DType t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::map<std::string, Tensor> in;
  for (const auto& i : m.proto.graph().input()) {
    Tensor x = Tensor::from_f64(t, dims, spread(n));
    if (i.name() != "x") {  // a second input: other values, same range
      std::vector<double> v = spread(n);
      std::reverse(v.begin(), v.end());
      x = Tensor::from_f64(t, dims, v);
    }
    x.name = i.name();
    in[i.name()] = x;
  }
  return in;
}

// `m` down to each opset of `down` (each result checked and its bits
// compared with `m`'s), then the lowest back up to `m`'s opset.
void down_and_back(const Model& m, std::initializer_list<int64_t> down, const std::map<std::string, Tensor>& in) {
  const int64_t from = default_opset(m.proto);
  Model low = m;
  for (int64_t to : down) {
    INFO("down to opset " << to);
    low = converted(m, to);
    CHECK(default_opset(low.proto) == to);
    expect_same_bits(m, low, in);
  }
  INFO("back up to opset " << from);
  const Model up = converted(low, from);
  CHECK(default_opset(up.proto) == from);
  expect_same_bits(m, up, in);
}

const DType kFloats[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16};

}  // namespace

TEST_CASE("Swish-24 below 24 is Mul, Sigmoid, Mul with the same bits, float16 and bfloat16 in float between Casts",
          "[upgrade][opset28]") {
  const std::vector<int64_t> dims{2, 3, 5};
  for (const DType t : kFloats) {
    for (const float alpha : {1.0f, 1.702f}) {
      INFO(dtype_name(t) << " alpha " << alpha);
      Model m = unary(24, "Swish", t, dims);
      if (alpha != 1.0f) set_attr(*g(m).mutable_node(0), "alpha", alpha);
      const auto in = spread_inputs(m, t, dims);
      const Model at23 = converted(m, 23);
      CHECK_FALSE(has_op(at23, "Swish"));
      CHECK(count_op(at23, "Sigmoid") == 1);
      CHECK(count_op(at23, "Mul") == (alpha == 1.0f ? 1 : 2));
      CHECK(count_op(at23, "Cast") == (t == DType::float16 || t == DType::bfloat16 ? 2 : 0));
      down_and_back(m, {23, 21, 17}, in);
    }
  }
}

TEST_CASE("Swish's evaluation, which the lowering is compared with, is x * sigmoid(alpha x)", "[upgrade][opset28]") {
  Model m = unary(24, "Swish", DType::float64, {4});
  set_attr(*g(m).mutable_node(0), "alpha", 2.0f);
  Tensor x = Tensor::from_f64(DType::float64, {4}, {0.0, 1.0, -3.0, 20.0});
  x.name = "x";
  const auto y = evaluated(m, {{"x", x}}).at("y");
  const double* v = y.data<double>();
  const double want[] = {0.0, 1.0 / (1.0 + std::exp(-2.0)), -3.0 / (1.0 + std::exp(6.0)), 20.0 / (1.0 + std::exp(-40.0))};
  for (int i = 0; i < 4; ++i) CHECK(v[i] == Approx(want[i]).epsilon(1e-14));
}

TEST_CASE("SwiGLU-28 below 28 is Swish(A) * B written as Mul, Sigmoid, Mul, Mul with the same bits", "[upgrade][opset28]") {
  const std::vector<int64_t> dims{2, 8};
  for (const DType t : kFloats) {
    for (const float alpha : {1.0f, 0.5f}) {
      INFO(dtype_name(t) << " alpha " << alpha);
      Model m = net(28);
      input(m, "x", t, dims);
      input(m, "b", t, dims);
      auto& n = node(m, "SwiGLU", {"x", "b"}, {"y"}, "glu");
      if (alpha != 1.0f) set_attr(n, "alpha", alpha);
      add_output(g(m), "y", t, dims);
      const auto in = spread_inputs(m, t, dims);
      const Model at27 = converted(m, 27);
      CHECK_FALSE(has_op(at27, "SwiGLU"));
      CHECK(count_op(at27, "Sigmoid") == 1);
      CHECK(count_op(at27, "Mul") == (alpha == 1.0f ? 2 : 3));
      CHECK(count_op(at27, "Cast") == (t == DType::float16 || t == DType::bfloat16 ? 3 : 0));
      down_and_back(m, {27, 24, 23, 17}, in);
    }
  }
}

TEST_CASE("SwiGLU with inputs of different known shapes is refused: it does not broadcast, Mul does", "[upgrade][opset28]") {
  Model m = net(28);
  input(m, "x", DType::float32, {2, 8});
  input(m, "b", DType::float32, {1, 8});
  node(m, "SwiGLU", {"x", "b"}, {"y"}, "glu");
  add_output(g(m), "y", DType::float32, {2, 8});
  const std::string e = upgrade_error_of(m, 23);
  INFO(e);
  CHECK(e.find("'glu'") != std::string::npos);
  CHECK(e.find("does not broadcast") != std::string::npos);
}

TEST_CASE("Celu-28 is Celu-12 for float, bfloat16 goes through float between Casts; float16 and double are refused "
          "below 28 naming the type", "[upgrade][opset28]") {
  const std::vector<int64_t> dims{3, 7};
  const Model m = unary(28, "Celu", DType::float32, dims);
  down_and_back(m, {23, 17, 12}, spread_inputs(m, DType::float32, dims));
  CHECK(upgrade_error_of(m, 11).find("Celu") != std::string::npos);
  const Model bf = unary(28, "Celu", DType::bfloat16, dims);
  const Model bf23 = converted(bf, 23);
  CHECK(count_op(bf23, "Cast") == 2);
  down_and_back(bf, {23, 17, 13}, spread_inputs(bf, DType::bfloat16, dims));
  for (const DType t : {DType::float16, DType::float64}) {
    INFO(dtype_name(t));
    const std::string e = upgrade_error_of(unary(28, "Celu", t, dims), 23);
    CHECK(e.find("'n'") != std::string::npos);
    CHECK(e.find(dtype_name(t)) != std::string::npos);
  }
}

TEST_CASE("TopK-24 and Range-27 are type-only: the same bits at 23 and 17, bfloat16 TopK and float16 Range refused",
          "[upgrade][opset28]") {
  {
    Model m = net(24);
    input(m, "x", DType::float32, {3, 6});
    constant(m, "k", DType::int64, {1}, 4.0);
    node(m, "TopK", {"x", "k"}, {"v", "i"}, "top");
    add_output(g(m), "v", DType::float32, {3, 4});
    add_output(g(m), "i", DType::int64, {3, 4});
    down_and_back(m, {23, 17, 11}, spread_inputs(m, DType::float32, {3, 6}));
    Model bf = net(24);
    input(bf, "x", DType::bfloat16, {3, 6});
    constant(bf, "k", DType::int64, {1}, 4.0);
    node(bf, "TopK", {"x", "k"}, {"v", "i"}, "top");
    add_output(g(bf), "v", DType::bfloat16, {3, 4});
    add_output(g(bf), "i", DType::int64, {3, 4});
    const std::string e = upgrade_error_of(bf, 23);
    INFO(e);
    CHECK(e.find("'top'") != std::string::npos);
    CHECK(e.find("bfloat16") != std::string::npos);
  }
  for (const DType t : {DType::float32, DType::int32, DType::float16}) {
    INFO(dtype_name(t));
    Model m = net(27);
    for (const char* v : {"start", "limit", "delta"}) {
      input(m, v, t, {});
      g(m).mutable_input(g(m).input_size() - 1)->mutable_type()->mutable_tensor_type()->mutable_shape();  // a scalar
    }
    auto& n = node(m, "Range", {"start", "limit", "delta"}, {"y"}, "range");
    set_attr(n, "stash_type", int64_t{1});
    add_output(g(m), "y", t, {-1});
    g(m).mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("n");
    std::map<std::string, Tensor> in;
    const double values[] = {3.0, 40.0, 3.0};
    int k = 0;
    for (const char* v : {"start", "limit", "delta"}) {
      in[v] = Tensor::from_f64(t, {}, {values[k++]});
      in[v].name = v;
    }
    if (t == DType::float16) {
      const std::string e = upgrade_error_of(m, 23);
      INFO(e);
      CHECK(e.find("'range'") != std::string::npos);
      CHECK(e.find("float16") != std::string::npos);
      continue;
    }
    const Model low = converted(m, 23);
    CHECK_FALSE(has_attr(first_node(low, "Range"), "stash_type"));
    down_and_back(m, {23, 17, 11}, in);
  }
}

TEST_CASE("Cast-24/25 go down unchanged when their types exist at the target; round_mode is dropped", "[upgrade][opset28]") {
  Model m = net(25);
  input(m, "x", DType::float32, {2, 5});
  auto& n = node(m, "Cast", {"x"}, {"y"}, "cast");
  set_attr(n, "to", int64_t{6});
  auto* rm = n.add_attribute();
  rm->set_name("round_mode");
  rm->set_type(onnx::AttributeProto::STRING);
  rm->set_s("up");
  add_output(g(m), "y", DType::int32, {2, 5});
  const Model low = converted(m, 23);
  CHECK_FALSE(has_attr(first_node(low, "Cast"), "round_mode"));
  down_and_back(m, {23, 17}, spread_inputs(m, DType::float32, {2, 5}));
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

TEST_CASE("Attention-24 with nonpad_kv_seqlen, or 25 with a window, is refused below naming what", "[upgrade][opset28]") {
  Model m = net(24);
  for (const char* v : {"q", "k", "v"}) input(m, v, DType::float32, {1, 2, 3, 4});
  input(m, "lens", DType::int64, {1});
  node(m, "Attention", {"q", "k", "v", "", "", "", "lens"}, {"y"}, "attn");
  add_output(g(m), "y", DType::float32, {1, 2, 3, 4});
  const std::string e = upgrade_error_of(m, 23);
  INFO(e);
  CHECK(e.find("'attn'") != std::string::npos);
  CHECK(e.find("nonpad_kv_seqlen") != std::string::npos);

  Model w = net(25);
  for (const char* v : {"q", "k", "v"}) input(w, v, DType::float32, {1, 2, 3, 4});
  auto& a = node(w, "Attention", {"q", "k", "v"}, {"y"}, "attn");
  set_attr(a, "left_window_size", int64_t{2});
  set_attr(a, "right_window_size", int64_t{-1});
  add_output(g(w), "y", DType::float32, {1, 2, 3, 4});
  const std::string ew = upgrade_error_of(w, 24);
  INFO(ew);
  CHECK(ew.find("left_window_size = 2") != std::string::npos);
  CHECK(ew.find("right_window_size") == std::string::npos);
}

TEST_CASE("CumProd, BitCast, LinearAttention and CausalConvWithState are refused below their opset, each with why",
          "[upgrade][opset28]") {
  struct Case {
    const char* op;
    int64_t opset;
    std::vector<std::string> inputs;
    const char* why;
  };
  const Case cases[] = {
      {"CumProd", 26, {"x", "axis"}, "no exact form"},
      {"BitCast", 26, {"x"}, "reinterprets bits"},
      {"LinearAttention", 27, {"x", "x", "x"}, "recurrence"},
      {"CausalConvWithState", 27, {"x", "x"}, "recurrence"},
  };
  for (const auto& c : cases) {
    INFO(c.op);
    Model m = net(c.opset);
    input(m, "x", DType::float32, {1, 2, 4});
    constant(m, "axis", DType::int64, {}, 1.0);
    auto& n = node(m, c.op, c.inputs, {"y"}, "op");
    if (std::string(c.op) == "BitCast") set_attr(n, "to", int64_t{6});
    if (std::string(c.op) == "LinearAttention") {
      set_attr(n, "q_num_heads", int64_t{1});
      set_attr(n, "kv_num_heads", int64_t{1});
      n.add_output("state");
    }
    if (std::string(c.op) == "CausalConvWithState") n.add_output("state");
    add_output(g(m), "y", DType::float32, {1, 2, 4});
    const std::string e = upgrade_error_of(m, c.opset - 1);
    INFO(e);
    CHECK(e.find("'op'") != std::string::npos);
    CHECK(e.find(fmt::format("op '{}' does not exist at opset {}", c.op, c.opset - 1)) != std::string::npos);
    CHECK(e.find(c.why) != std::string::npos);
  }
}

TEST_CASE("a float model at 17 goes up to 28 and back with the same bits; the default target stays 15",
          "[upgrade][opset28]") {
  Model m = net(17);
  input(m, "x", DType::float32, {2, 6});
  node(m, "Celu", {"x"}, {"c"}, "celu");
  node(m, "Relu", {"c"}, {"r"}, "relu");
  node(m, "Flatten", {"r"}, {"y"}, "flat");
  add_output(g(m), "y", DType::float32, {2, 6});
  const auto in = spread_inputs(m, DType::float32, {2, 6});
  const Model at28 = converted(m, 28);
  CHECK(default_opset(at28.proto) == 28);
  CHECK(at28.proto.ir_version() == 13);
  expect_same_bits(m, at28, in);
  expect_same_bits(m, converted(at28, 17), in);
  CHECK(UpgradeOptions{}.target == 15);
}

TEST_CASE("a transformer MLP block at 28 (RMSNormalization, SwiGLU) goes to 23, 21 and 17 with the same numbers",
          "[upgrade][opset28]") {
  // x [2, 4, 8] -> RMSNormalization -> gate/up MatMuls [8, 16] -> SwiGLU -> down MatMul [16, 8] -> + x
  Model m = net(28);
  input(m, "x", DType::float32, {2, 4, 8});
  constant(m, "norm_scale", DType::float32, {8}, 0.75);
  constant(m, "w_gate", DType::float32, {8, 16}, 0.05);
  constant(m, "w_up", DType::float32, {8, 16}, -0.03);
  constant(m, "w_down", DType::float32, {16, 8}, 0.02);
  node(m, "RMSNormalization", {"x", "norm_scale"}, {"h"}, "norm");
  node(m, "MatMul", {"h", "w_gate"}, {"gate"}, "gate_proj");
  node(m, "MatMul", {"h", "w_up"}, {"up"}, "up_proj");
  node(m, "SwiGLU", {"gate", "up"}, {"act"}, "act");
  node(m, "MatMul", {"act", "w_down"}, {"down"}, "down_proj");
  node(m, "Add", {"x", "down"}, {"y"}, "residual");
  add_output(g(m), "y", DType::float32, {2, 4, 8});
  // 23: RMSNormalization stays, SwiGLU is lowered exactly; 21 and 17: RMSNormalization is lowered too (rounded
  // differently: compared within the documented tolerance, as its own lowering tests are).
  const auto in = spread_inputs(m, DType::float32, {2, 4, 8});
  const Model at23 = converted(m, 23);
  CHECK(has_op(at23, "RMSNormalization"));
  CHECK_FALSE(has_op(at23, "SwiGLU"));
  expect_same_bits(m, at23, in);
  for (const int64_t to : {21, 17}) {
    INFO("to " << to);
    const Model low = converted(m, to);
    CHECK_FALSE(has_op(low, "RMSNormalization"));
    expect_same_outputs(m, low);
  }
}

TEST_CASE("every ONNX node test at opsets 24..28 goes to 23 and 17 and back with ONNX's expected outputs, or is "
          "refused for a named reason", "[upgrade][opset28][onnx-node]") {
  // The expected outputs are ONNX's (testdata/onnx-node-1.23), not bnorm's: each converted model runs on the
  // folder's inputs. A refusal must give one of the reasons this issue names.
  const char* reasons[] = {
      "a type no op has before opset",  // int2/uint2 (25), FLOAT8E8M0 is refused at load
      "does not have",                  // an element type the target version lacks (float16 Celu-28, ...)
      "no exact form",                  "reinterprets bits",  "write_indices", "recurrence", "nonpad_kv_seqlen",
      "does not exist at opset 17",     // Attention-23 and the other ops bnorm does not lower below their opset
      // going to 17, the changes of 18..23 (docs/upgrade.md): Pad-18 axes, Q/DQ-21 block_size, Pad-19 wrap
      "cannot be left out below 18",    "has no equivalent below version", "was added at version",
  };
  TempDir tmp;
  int passed = 0, refused = 0, not_run = 0;
  for (const auto& dir : find_backend_tests(testdata("onnx-node-1.23"))) {
    const std::string name = dir.filename().string();
    if (name.find("expanded") != std::string::npos || name.find("flexattention") != std::string::npos) continue;
    Model original;
    try {
      original = load_model(dir / "model.onnx");
    } catch (const Error&) {
      continue;  // FLOAT8E8M0 (IR 12): refused at load, by part 1's decision
    }
    const int64_t from = default_opset(original.proto);
    if (from < 24) continue;
    for (const int64_t to : {int64_t{23}, int64_t{17}}) {
      INFO(name << " from " << from << " to " << to);
      Model m = original;
      UpgradeOptions o;
      o.target = to;
      try {
        upgrade_model(m, o);
      } catch (const Error& e) {
        const std::string why = e.what();
        INFO(why);
        bool named = false;
        for (const char* r : reasons) named = named || why.find(r) != std::string::npos;
        CHECK(named);
        // The ops this issue converts exactly are never refused (their float16 forms: SwiGLU's and Swish's Casts).
        for (const char* exact : {"test_swish", "test_swiglu", "test_top_k", "test_range_float_type",
                                  "test_range_int32_type", "test_split_to_sequence"}) {
          CHECK(name.rfind(exact, 0) != 0);
        }
        CHECK(name != "test_celu");
        CHECK(name != "test_celu_bfloat16");
        ++refused;
        continue;
      }
      const Model back = converted(m, from);
      for (const Model* res : {static_cast<const Model*>(&m), &back}) {
        const std::filesystem::path out = tmp / fmt::format("{}_{}_{}", name, to, res == &m ? "down" : "back");
        std::filesystem::create_directories(out);
        Model copy = *res;
        save_model(copy, out / "model.onnx");
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
          if (e.is_directory()) std::filesystem::copy(e.path(), out / e.path().filename());
        }
        const BackendTestResult t = run_backend_test(out, {1e-3, 1e-7});
        INFO(t.skip_reason << t.error);
        if (t.skipped) {  // the original does not run either (Attention-24/25: not in eval yet)
          CHECK(run_backend_test(dir, {1e-3, 1e-7}).skipped);
          ++not_run;
          continue;
        }
        CHECK(t.pass());
        ++passed;
      }
    }
  }
  INFO("passed " << passed << ", refused " << refused << ", not run " << not_run);
  WARN("ONNX node tests at 24..28 converted: " << passed << " runs passed, " << refused << " refused, " << not_run << " not run");
  CHECK(passed >= 580);  // 582 on 2026-11-27 (3 Attention tests lowered at 17 among them)
  CHECK(refused >= 60);
}

namespace {

// A decoder step: RMSNormalization, causal Attention with a KV cache (past 3, one new token), SwiGLU MLP, at 23.
Model decoder_step(bool mask) {
  Model m = net(23);
  input(m, "x", DType::float32, {1, 2, 1, 4});
  input(m, "past_k", DType::float32, {1, 2, 3, 4});
  input(m, "past_v", DType::float32, {1, 2, 3, 4});
  constant(m, "norm_scale", DType::float32, {4}, 0.75);
  constant(m, "w_gate", DType::float32, {4, 8}, 0.05);
  constant(m, "w_up", DType::float32, {4, 8}, -0.03);
  constant(m, "w_down", DType::float32, {8, 4}, 0.02);
  node(m, "RMSNormalization", {"x", "norm_scale"}, {"h"}, "norm");
  std::vector<std::string> in{"h", "h", "h", "", "past_k", "past_v"};
  if (mask) {
    input(m, "mask", DType::float32, {1, 1, 1, 4});
    in[3] = "mask";
  }
  auto& a = node(m, "Attention", in, {"attn", "present_k", "present_v"}, "attn");
  set_attr(a, "is_causal", int64_t{1});
  node(m, "MatMul", {"attn", "w_gate"}, {"gate"}, "gate_proj");
  node(m, "MatMul", {"attn", "w_up"}, {"up"}, "up_proj");
  node(m, "Mul", {"gate", "up"}, {"act"}, "act");  // SwiGLU's value side; the gate's Swish comes at 28
  node(m, "MatMul", {"act", "w_down"}, {"y"}, "down_proj");
  add_output(g(m), "y", DType::float32, {1, 2, 1, 4});
  add_output(g(m), "present_k", DType::float32, {1, 2, 4, 4});
  add_output(g(m), "present_v", DType::float32, {1, 2, 4, 4});
  return m;
}

}  // namespace

TEST_CASE("a decoder step with a causal KV-cache Attention goes 23 -> 28 -> 21 and 17: Attention as MatMul, Softmax, "
          "MatMul, the numbers of the Attention-23 model", "[upgrade][opset28]") {
  const Model m = decoder_step(false);
  const Model at28 = converted(m, 28);
  CHECK(first_node(at28, "Attention").input_size() == 6);
  for (const int64_t to : {22, 21, 17, 13, 11}) {
    INFO("28 -> " << to);
    const Model low = converted(at28, to);
    CHECK_FALSE(has_op(low, "Attention"));
    CHECK(count_op(low, "Softmax") == 1);
    CHECK(count_op(low, "Concat") == 2);
    expect_same_outputs(m, low);  // the Attention-23 model, evaluated in float64 and rounded once
  }
  const std::string masked = upgrade_error_of(decoder_step(true), 21);
  INFO(masked);
  CHECK(masked.find("'attn'") != std::string::npos);
  CHECK(masked.find("attn_mask is not written") != std::string::npos);
}

namespace {

// A KV cache [2, 2, 6, 3] updated with [2, 2, 2, 3] at 24; write_indices: none, a constant, or an input.
Model tensor_scatter(const std::vector<double>* at, bool as_input, const char* mode) {
  Model m = net(24);
  input(m, "past", DType::float32, {2, 2, 6, 3});
  input(m, "update", DType::float32, {2, 2, 2, 3});
  std::vector<std::string> in{"past", "update"};
  if (as_input) {
    input(m, "w", DType::int64, {2});
    in.push_back("w");
  } else if (at) {
    Tensor w = Tensor::from_f64(DType::int64, {2}, *at);
    w.name = "w";
    *g(m).add_initializer() = to_proto(w);
    in.push_back("w");
  }
  auto& n = node(m, "TensorScatter", in, {"present"}, "scatter");
  if (mode) {
    auto* a = n.add_attribute();
    a->set_name("mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(mode);
  }
  add_output(g(m), "present", DType::float32, {2, 2, 6, 3});
  return m;
}

}  // namespace

TEST_CASE("TensorScatter-24 writing at one known position is Slice, Concat below 24, the same bits; other forms are "
          "refused with why", "[upgrade][opset28]") {
  const std::vector<double> at0{0, 0}, at3{3, 3}, at4{4, 4}, mixed{1, 3}, beyond{5, 5};
  struct Case {
    const std::vector<double>* at;
    const char* mode;
    int slices;
  };
  for (const Case& c : {Case{nullptr, nullptr, 1}, Case{&at0, nullptr, 1}, Case{&at3, nullptr, 2}, Case{&at4, nullptr, 1},
                        Case{&at3, "circular", 2}}) {
    INFO("write at " << (c.at ? (*c.at)[0] : 0) << " mode " << (c.mode ? c.mode : "linear"));
    const Model m = tensor_scatter(c.at, false, c.mode);
    std::map<std::string, Tensor> in;
    for (const char* name : {"past", "update"}) {
      const std::vector<int64_t> dims{2, 2, std::string(name) == "past" ? 6 : 2, 3};
      int64_t count = 1;
      for (int64_t d : dims) count *= d;
      std::vector<double> v;
      for (int64_t i = 0; i < count; ++i) v.push_back((std::string(name) == "past" ? 1.0 : -1.0) * static_cast<double>(i + 1));
      in[name] = Tensor::from_f64(DType::float32, dims, v);
      in[name].name = name;
    }
    const Model low = converted(m, 23);
    CHECK_FALSE(has_op(low, "TensorScatter"));
    CHECK(count_op(low, "Slice") == c.slices);
    // The update lands where ONNX's pseudocode puts it: present[b, h, w + s, :] = update[b, h, s, :].
    const auto y = evaluated(low, in).at("present").to_f64();
    const auto w = static_cast<int64_t>(c.at ? (*c.at)[0] : 0);
    CHECK(y[static_cast<size_t>(w * 3)] == -1.0);                   // update[0, 0, 0, 0]
    CHECK(y[static_cast<size_t>((w + 1) * 3 + 2)] == -6.0);         // update[0, 0, 1, 2]
    if (w > 0) CHECK(y[0] == 1.0);                                  // past[0, 0, 0, 0] kept
    down_and_back(m, {23, 17, 13}, in);
  }
  for (const auto& [m, why] : {std::pair{tensor_scatter(&mixed, false, nullptr), "differ between samples"},
                               std::pair{tensor_scatter(nullptr, true, nullptr), "not a constant"},
                               std::pair{tensor_scatter(&beyond, false, nullptr), "outside the cache"}}) {
    const std::string e = upgrade_error_of(m, 23);
    INFO(e);
    CHECK(e.find("'scatter'") != std::string::npos);
    CHECK(e.find(why) != std::string::npos);
  }
}
