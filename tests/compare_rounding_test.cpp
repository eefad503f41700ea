// eval --compare's default criterion on a deep network whose float32
// values grow far from exact arithmetic (issue 25): a correct fold passes
// for every seed, where the fixed element tolerance cries wolf; a bias off
// by 1e-3 in one channel, one BatchNormalization's epsilon 1e-3 instead of
// 1e-5, and two swapped output channels each fail, located at the value
// where they enter.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <bnorm/eval.h>
#include <bnorm/fold.h>

#include <cmath>
#include <string>

#include "model/model.h"
#include "model/tensor_proto.h"
#include "support/test_graph.h"

using namespace bnorm;
using namespace bnorm::test;
using nlohmann::json;

namespace {

constexpr int kBlocks = 24;
constexpr int64_t kChannels = 32;

// Deterministic values: uniform in [lo, hi), or roughly normal (the sum of
// four uniforms) with standard deviation `sd` when `normal`.
Tensor values(std::vector<int64_t> dims, uint32_t seed, double lo, double hi, bool normal = false) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 7;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return (s >> 8) / 16777216.0;
  };
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = 0;
    if (normal) {
      for (int k = 0; k < 4; ++k) v += next() - 0.5;
      v *= hi * std::sqrt(3.0);  // sd of the sum of four U(-0.5, 0.5): 1/sqrt(3)
    } else {
      v = lo + (hi - lo) * next();
    }
    t.data<float>()[i] = static_cast<float>(v);
  }
  return t;
}

// x [1, 32, 8, 8] -> 24 x (Conv 3x3 pads 1, no bias -> BatchNormalization
// -> Relu), opset 13: activations grow about 2x a block, as in
// bench/gen_large_model.py. `eps_block` gets epsilon 1e-3 (-1: none does).
Model network(int eps_block = -1) {
  GraphBuilder b(13);
  b.input("input", DType::float32, {1, kChannels, 8, 8});
  std::string x = "input";
  for (int k = 0; k < kBlocks; ++k) {
    const std::string s = std::to_string(k);
    b.initializer("w" + s, values({kChannels, kChannels, 3, 3}, 100 + k, 0, 0.15, true));
    b.initializer("s" + s, values({kChannels}, 200 + k, 0.5, 1.5));
    b.initializer("b" + s, values({kChannels}, 300 + k, -0.1, 0.1));
    b.initializer("m" + s, values({kChannels}, 400 + k, -0.1, 0.1));
    b.initializer("v" + s, values({kChannels}, 500 + k, 0.5, 1.5));
    auto& conv = b.node("Conv", {x, "w" + s}, {"c" + s}, "conv" + s);
    auto* pads = conv.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    auto& bn = b.node("BatchNormalization", {"c" + s, "s" + s, "b" + s, "m" + s, "v" + s}, {"n" + s}, "bn" + s);
    if (k == eps_block) {
      auto* eps = bn.add_attribute();
      eps->set_name("epsilon");
      eps->set_type(onnx::AttributeProto::FLOAT);
      eps->set_f(1e-3f);
    }
    b.node("Relu", {"n" + s}, {"r" + s}, "relu" + s);
    x = "r" + s;
  }
  b.output(x);
  Model m = b.model();
  m.proto.set_ir_version(8);
  return m;
}

Model folded() {
  Model m = network();
  REQUIRE(api::fold(m).passed());
  return m;
}

// The initializer input `i` of node `node` of `m`, changed by `f`.
template <typename F>
void change(Model& m, const std::string& node, int i, F&& f) {
  for (const auto& n : m.proto.graph().node()) {
    if (n.name() != node) continue;
    for (auto& t : *m.proto.mutable_graph()->mutable_initializer()) {
      if (t.name() != n.input(i)) continue;
      Tensor v = decode_tensor(t, {});
      f(v);
      onnx::TensorProto p = to_proto(v);
      p.set_name(t.name());
      t = p;
      return;
    }
  }
  FAIL("no initializer input " << i << " of " << node);
}

json compare(const Model& a, const Model& b, uint64_t seed, const std::string& tolerance = "", bool trace = false) {
  api::CompareRequest r;
  r.seed = seed;
  r.tolerance = tolerance;
  r.trace = trace;
  const api::Report rep = api::compare(a, b, r);
  CHECK(rep.exit_code == (rep.data["pass"].get<bool>() ? 0 : 1));
  return rep.data;
}

}  // namespace

TEST_CASE("a correct fold of a deep network passes the default compare for every seed, where fixed tolerances fail",
          "[compare][rounding]") {
  const Model a = network();
  const Model b = folded();
  int fixed_failures = 0;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const json j = compare(a, b, seed);
    INFO("seed " << seed << ": " << j.dump());
    CHECK(j["pass"] == true);
    CHECK(j["reference"] == "a-float64");
    CHECK(j["values"]["compared"] == kBlocks * 2);  // n_k and r_k: every folded block's values
    CHECK(j["values"]["failed"] == 0);
    const json& out = j["outputs"][0];
    CHECK(out["criterion"] == "rounding");
    // The errors are large in absolute terms: float32's own, which B shares.
    CHECK(out["rounding"]["error_a"]["max"].get<double>() > 0);
    fixed_failures += compare(a, b, seed, "fixed")["pass"] == false;
  }
  // The element-wise tolerance measures float32's rounding, not the fold.
  CHECK(fixed_failures > 0);
}

TEST_CASE("planted errors fail the default compare, located where they enter", "[compare][rounding]") {
  const Model a = network();
  struct Planted {
    const char* what;
    Model b;
    std::string value;  // where the error enters
  };
  std::vector<Planted> cases;
  {
    Model b = folded();  // conv0 now has the folded bias (input 2)
    change(b, "conv0", 2, [](Tensor& t) { t.data<float>()[3] *= 1.001f; });
    cases.push_back({"one channel's folded bias off by 1e-3", std::move(b), "n0"});
  }
  cases.push_back({"epsilon 1e-3 instead of 1e-5 in bn10", network(10), "n10"});
  {
    Model b = folded();
    change(b, "conv12", 1, [](Tensor& t) {
      const int64_t per = t.numel() / t.dims[0];
      for (int64_t i = 0; i < per; ++i) std::swap(t.data<float>()[3 * per + i], t.data<float>()[4 * per + i]);
    });
    cases.push_back({"two output channels' weights swapped in conv12", std::move(b), "n12"});
  }
  for (const auto& c : cases) {
    for (uint64_t seed = 0; seed < 2; ++seed) {
      const json j = compare(a, c.b, seed);
      INFO(c.what << ", seed " << seed << ": " << j["values"].dump());
      CHECK(j["pass"] == false);
      REQUIRE(j["values"]["first_failed"].is_object());
      CHECK(j["values"]["first_failed"]["name"] == c.value);
      const json t = compare(a, c.b, seed, "", true);
      CHECK(t["trace"]["first_divergence"]["name"] == c.value);
    }
  }
}
