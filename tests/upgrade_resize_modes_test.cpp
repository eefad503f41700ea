// Resize's coordinate modes that exist at some versions only (issue 26):
// tf_half_pixel_for_nn (Resize-11 only: gone at 13) going up, and
// half_pixel_symmetric (from 19) going down. Where an exact form exists at
// the target it is written; otherwise the node is refused by name; a model
// that carries a mode its version lacks is refused by eval and upgrade
// alike (docs/semantics.md, "Resize coordinate modes across versions").
// Expected numbers: the model before conversion, run by the evaluator at
// its own version (the modes' formulas are tested against hand values in
// lib/eval/ops/resize/resize_test.cpp).
#include <catch2/catch.hpp>

#include "core/error.h"
#include "model/attrs.h"
#include "support/cli.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

// Resize of X [1, 1, in_h, in_w] by constant scales [1, 1, sh, sw] (or sizes), nearest or linear.
Model resize(int64_t opset, int64_t in_h, int64_t in_w, float sh, float sw, const std::string& transform,
             const std::string& nearest, const std::string& mode = "nearest", bool sizes = false) {
  TestNet t(opset);
  t.input("X", DType::float32, {1, 1, in_h, in_w});
  t.init("roi", DType::float32, {0}, {});
  const auto oh = static_cast<int64_t>(std::floor(static_cast<double>(in_h) * sh));
  const auto ow = static_cast<int64_t>(std::floor(static_cast<double>(in_w) * sw));
  if (sizes) {
    t.init("scales", DType::float32, {0}, {});
    t.init("sizes", DType::int64, {4}, {1, 1, static_cast<double>(oh), static_cast<double>(ow)});
  } else {
    t.init("scales", DType::float32, {4}, {1, 1, sh, sw});
  }
  auto& n = t.node("Resize", sizes ? std::vector<std::string>{"X", "roi", "scales", "sizes"}
                                   : std::vector<std::string>{"X", "roi", "scales"},
                   {"Y"}, "resize");
  set_string(n, "mode", mode);
  set_string(n, "coordinate_transformation_mode", transform);
  if (!nearest.empty()) set_string(n, "nearest_mode", nearest);
  add_output(t.g(), "Y", DType::float32, {1, 1, oh, ow});
  return t.m;
}

std::string attr_s(const onnx::NodeProto& n, const char* name) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : "";
}

const onnx::NodeProto& the_resize(const Model& m) {
  for (const auto& n : m.proto.graph().node())
    if (n.op_type() == "Resize") return n;
  FAIL("no Resize");
  throw;
}

struct Scales {
  int64_t h, w;
  float sh, sw;
};
// Up, down, fractional, and an output axis of length 1 (3 x 0.4 -> 1).
const Scales kScales[] = {{4, 5, 2.0f, 3.0f}, {6, 8, 0.5f, 0.75f}, {5, 7, 1.7f, 0.6f}, {3, 3, 0.4f, 1.0f},
                          {4, 6, 1.5f, 2.5f}};

}  // namespace

TEST_CASE("Resize-11 tf_half_pixel_for_nn goes up across 13 as half_pixel with the nearest_mode that picks the same "
          "samples",
          "[upgrade][resize]") {
  // floor((x + 0.5) / s) = round_prefer_ceil((x + 0.5) / s - 0.5); round_prefer_floor(v) = ceil(v - 0.5).
  const std::pair<std::string, std::string> kMap[] = {{"floor", "round_prefer_ceil"}, {"round_prefer_floor", "ceil"},
                                                      {"", "ceil"}};
  for (const auto& [before, after] : kMap) {
    for (const auto& sc : kScales) {
      for (const int64_t to : {13, 18, 19}) {
        INFO("nearest_mode '" << before << "' " << sc.h << "x" << sc.w << " scales " << sc.sh << ", " << sc.sw
                              << " -> " << to);
        const Model m = resize(11, sc.h, sc.w, sc.sh, sc.sw, "tf_half_pixel_for_nn", before);
        const Model up = converted(m, to);
        CHECK(attr_s(the_resize(up), "coordinate_transformation_mode") == "half_pixel");
        CHECK(attr_s(the_resize(up), "nearest_mode") == after);
        expect_same_outputs(m, up);
        CHECK(attr_s(the_resize(converted(m, 12)), "coordinate_transformation_mode") == "tf_half_pixel_for_nn");
      }
    }
  }
  // No mode of 13 picks what ceil or round_prefer_ceil pick here, and linear has no such form: refused by name.
  for (const auto& [mode, nearest] : {std::pair<std::string, std::string>{"nearest", "ceil"},
                                      {"nearest", "round_prefer_ceil"}, {"linear", ""}}) {
    INFO(mode << " " << nearest);
    const std::string why = upgrade_error_of(resize(11, 4, 5, 2.0f, 3.0f, "tf_half_pixel_for_nn", nearest, mode), 13);
    CHECK(why.find("'resize'") != std::string::npos);
    CHECK(why.find("tf_half_pixel_for_nn") != std::string::npos);
  }
}

TEST_CASE("a Resize-13+ carrying tf_half_pixel_for_nn is refused by eval and upgrade alike, naming the node",
          "[upgrade][resize]") {
  TempDir tmp;
  const fs::path model = tmp / "tf_at_16.onnx";
  Model m = resize(16, 4, 5, 2.0f, 3.0f, "tf_half_pixel_for_nn", "floor");
  save_model(m, model);
  const auto ev = run_cli({"eval", model.string(), "--random", "1"});
  CHECK(ev.exit_code == 2);
  CHECK(ev.err.find("tf_half_pixel_for_nn") != std::string::npos);
  for (const char* to : {"17", "11", "19"}) {
    INFO("--to " << to);
    const auto up = run_cli({"upgrade", model.string(), "--to", to, "-o", (tmp / "out.onnx").string()});
    INFO(up.err);
    CHECK(up.exit_code == 2);
    CHECK(up.err.find("'resize'") != std::string::npos);
    CHECK(up.err.find("tf_half_pixel_for_nn") != std::string::npos);
    CHECK(!fs::exists(tmp / "out.onnx"));
    const auto plan = run_cli({"inspect", model.string(), "--to", to});
    CHECK(plan.out.find("tf_half_pixel_for_nn") != std::string::npos);
  }
}

TEST_CASE("Resize-19 half_pixel_symmetric goes below 19 as half_pixel when each output length is input x scale",
          "[upgrade][resize]") {
  for (const auto& sc : kScales) {
    for (const bool sizes : {false, true}) {
      const bool whole = std::floor(sc.h * static_cast<double>(sc.sh)) == sc.h * static_cast<double>(sc.sh) &&
                         std::floor(sc.w * static_cast<double>(sc.sw)) == sc.w * static_cast<double>(sc.sw);
      for (const std::string mode : {"nearest", "linear"}) {
        INFO(sc.h << "x" << sc.w << " scales " << sc.sh << ", " << sc.sw << (sizes ? " (sizes)" : "") << " " << mode);
        const Model m = resize(19, sc.h, sc.w, sc.sh, sc.sw, "half_pixel_symmetric", "", mode, sizes);
        if (whole || sizes) {
          const Model down = converted(m, 18);
          CHECK(attr_s(the_resize(down), "coordinate_transformation_mode") == "half_pixel");
          expect_same_outputs(m, down);
          expect_same_outputs(m, converted(m, 13));
        } else {
          const std::string why = upgrade_error_of(m, 18);
          CHECK(why.find("'resize'") != std::string::npos);
          CHECK(why.find("half_pixel_symmetric") != std::string::npos);
        }
      }
    }
  }
}
