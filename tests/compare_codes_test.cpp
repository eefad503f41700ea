// Quantized values compared as codes (issue 25, item 2): a model that
// quantizes a MatMul's output (DynamicQuantizeLinear), then dequantizes and
// goes on in float. B's weights differ from A's by float rounding's size:
// a few codes flip by one step where the float input sat on a rounding
// boundary, the outputs after them move by a whole step, and the compare
// says so and passes, B having run again with A's codes. A weight column
// 1% off fails, at the MatMul where it enters, and its flips are not called
// rounding.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <bnorm/eval.h>

#include <cmath>
#include <string>

#include "model/model.h"
#include "support/test_graph.h"

using namespace bnorm;
using namespace bnorm::test;
using nlohmann::json;

namespace {

Tensor uniform(std::vector<int64_t> dims, uint32_t seed, double lo, double hi) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 11;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(lo + (hi - lo) * ((s >> 8) / 16777216.0));
  }
  return t;
}

// x [64, 32] -> MatMul W1 -> DynamicQuantizeLinear -> DequantizeLinear ->
// MatMul W2 -> y [64, 16], opset 13. `w1` scales W1 element-wise.
Model quantized(const Tensor& w1_scale) {
  GraphBuilder b(13);
  b.input("x", DType::float32, {64, 32});
  Tensor w1 = uniform({32, 64}, 1, -1, 1);
  for (int64_t i = 0; i < w1.numel(); ++i) w1.data<float>()[i] *= w1_scale.data<float>()[i];
  b.initializer("W1", w1);
  b.initializer("W2", uniform({64, 16}, 2, -1, 1));
  b.node("MatMul", {"x", "W1"}, {"h"}, "mm1");
  b.node("DynamicQuantizeLinear", {"h"}, {"q", "s", "z"}, "dql");
  b.node("DequantizeLinear", {"q", "s", "z"}, {"d"}, "dq");
  b.node("MatMul", {"d", "W2"}, {"y"}, "mm2");
  b.output("y");
  Model m = b.model();
  m.proto.set_ir_version(7);
  return m;
}

Tensor ones() {
  Tensor t(DType::float32, {32, 64});
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 1;
  return t;
}

json compare(const Model& a, const Model& b, uint64_t seed, bool trace) {
  api::CompareRequest r;
  r.seed = seed;
  r.trace = trace;
  return api::compare(a, b, r).data;
}

const json& value(const json& j, const std::string& name) {
  for (const auto& v : j["trace"]["values"])
    if (v["name"] == name) return v;
  FAIL("no traced value " << name);
  throw;
}

}  // namespace

TEST_CASE("codes flipped by rounding are named, and the outputs after them pass with A's codes in B",
          "[compare][codes]") {
  const Model a = quantized(ones());
  Tensor tiny = uniform({32, 64}, 3, 1 - 3e-5, 1 + 3e-5);  // W1 off by float32-sized amounts
  const Model b = quantized(tiny);
  int flipped = 0;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    const json j = compare(a, b, seed, true);
    INFO("seed " << seed << ": " << j["values"].dump());
    CHECK(j["pass"] == true);
    CHECK(j["reference"] == "a");
    CHECK_THAT(j["float64_blocker"].get<std::string>(), Catch::Contains("dql") && Catch::Contains("integer codes"));
    const json& q = value(j, "q");
    REQUIRE(q["codes"].is_object());
    const json& c = q["codes"];
    CHECK(c["elements"] == 64 * 64);
    if (c["differ"].get<int>() == 0) continue;
    ++flipped;
    CHECK(c["max_steps"] == 1);
    CHECK(c["straddling"] == c["differ"]);
    CHECK(c["rounding"] == true);
    CHECK(q["explained"] == true);
    // The first flip's float inputs lie on either side of its boundary.
    const double lo = std::min(c["first"]["code_a"].get<double>(), c["first"]["code_b"].get<double>()) + 0.5;
    CHECK((c["first"]["position_a"].get<double>() - lo) * (c["first"]["position_b"].get<double>() - lo) <= 0);
    // A whole step moved y beyond the magnitude criterion: explained by the replay.
    CHECK(j["replayed"] == 1);
    CHECK(value(j, "y")["explained"] == true);
    CHECK(value(j, "h")["explained"] == false);
  }
  CHECK(flipped > 0);
}

TEST_CASE("a weight column 1% off fails where it enters, and its code flips are not rounding", "[compare][codes]") {
  const Model a = quantized(ones());
  Tensor off = ones();
  for (int64_t r = 0; r < 32; ++r) off.data<float>()[r * 64 + 5] = 1.01f;
  const Model b = quantized(off);
  const json j = compare(a, b, 0, true);
  CHECK(j["pass"] == false);
  CHECK(j["values"]["first_failed"]["name"] == "h");
  CHECK(j["replayed"] == 0);
  const json& q = value(j, "q");
  CHECK(q["codes"]["differ"].get<int>() > 0);
  CHECK(q["codes"]["rounding"] == false);
  CHECK(value(j, "y")["pass"] == false);
  CHECK(compare(a, b, 0, false)["pass"] == false);
}
