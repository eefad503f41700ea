// The structural check on hand-made models: each rule trips on a model
// that breaks it (the forms bnorm once wrote: Scan-16 still reading
// sequence_lens, a Resize-13 with Resize-11's tf_half_pixel_for_nn) and
// stays quiet on the same model written right.
#include "transforms/upgrade/structure.h"

#include <catch2/catch.hpp>

#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;
using bnorm::upgrade_detail::structure_problems;

namespace {

// Scan at `opset` over s0 [2] and xs [3, 2] (inputs as given), body s_out = s + x.
Model scan(int64_t opset, const std::vector<std::string>& inputs, int body_inputs) {
  TestNet t(opset);
  t.input("s0", DType::float32, {2});
  t.input("xs", DType::float32, {3, 2});
  auto& n = t.node("Scan", inputs, {"s", "ys"}, "scan");
  set_attr(n, "num_scan_inputs", int64_t{1});
  auto* a = n.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name("body");
  const char* names[] = {"s", "x", "extra"};
  for (int i = 0; i < body_inputs; ++i) {
    add_output(*g, names[i], DType::float32, {2});
    *g->add_input() = g->output(0);
    g->clear_output();
  }
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("s");
  add->add_input("x");
  add->add_output("s_out");
  auto* id = g->add_node();
  id->set_op_type("Identity");
  id->add_input("s_out");
  id->add_output("y");
  add_output(*g, "s_out", DType::float32, {2});
  add_output(*g, "y", DType::float32, {2});
  add_output(t.g(), "s", DType::float32, {2});
  add_output(t.g(), "ys", DType::float32, {3, 2});
  return t.m;
}

}  // namespace

TEST_CASE("the structural check: Scan's inputs and body against its version", "[upgrade][structure]") {
  CHECK(structure_problems(scan(16, {"s0", "xs"}, 2).proto).empty());
  // Scan-8 -> 16 as ONNX 1.12's adapter wrote it: sequence_lens (empty) kept.
  const auto kept = structure_problems(scan(16, {"", "s0", "xs"}, 2).proto);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].find("'scan' (Scan-16)") != std::string::npos);
  CHECK(kept[0].find("sequence_lens") != std::string::npos);
  const auto body = structure_problems(scan(16, {"s0", "xs"}, 3).proto);
  REQUIRE(body.size() == 1);
  CHECK(body[0].find("body has 3") != std::string::npos);
  CHECK(structure_problems(scan(8, {"", "s0", "xs"}, 2).proto).empty());
}

TEST_CASE("the structural check: string attribute values against the node's version, and required inputs",
          "[upgrade][structure]") {
  for (const int64_t opset : {11, 13, 19}) {
    TestNet t(opset);
    t.input("X", DType::float32, {1, 1, 2, 2});
    t.init("roi", DType::float32, {0}, {});
    t.init("scales", DType::float32, {4}, {1, 1, 2, 2});
    auto& n = t.node("Resize", {"X", "roi", "scales"}, {"Y"}, "resize");
    set_string(n, "mode", "nearest");
    set_string(n, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
    add_output(t.g(), "Y", DType::float32, {1, 1, 4, 4});
    INFO("opset " << opset);
    const auto p = structure_problems(t.m.proto);
    if (opset == 11) {
      CHECK(p.empty());
    } else {
      REQUIRE(p.size() == 1);
      CHECK(p[0].find("'tf_half_pixel_for_nn' is not a coordinate_transformation_mode") != std::string::npos);
    }
  }
  TestNet t(13);
  t.input("X", DType::float32, {2, 3});
  t.node("Gemm", {"X", ""}, {"Y"}, "gemm");  // B is required
  add_output(t.g(), "Y", DType::float32, {2, 3});
  const auto p = structure_problems(t.m.proto);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("'gemm' (Gemm-13)") != std::string::npos);
}
