// bnorm's own steps where ONNX 1.12's converter has no adapter at opsets
// <= 17 (transforms/upgrade/steps/onnx_gaps.h), continued from
// upgrade_onnx_gaps_test.cpp: RoiAlign, QuantizeLinear, the variadic ops,
// Reshape, Split, LpPool, Loop, Tile, Less and Upsample, and the changes that
// only added types. Each on a generated model converted down and back up
// with the same outputs (evaluator) and the checks on every result; the
// cases that cannot convert refused by node name.
#include <catch2/catch.hpp>

#include <limits>

#include "support/test_graph.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/upgrade.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

TEST_CASE("RoiAlign 16 -> 15: half_pixel moved into the rois (constant or by a Sub), output_half_pixel dropped, and back", "[upgrade][gaps]") {
  TestNet n(16);
  n.input("x", DType::float32, {1, 2, 6, 6});
  n.init("rois", DType::float32, {2, 4}, {0.5, 0.25, 4.5, 3.75, 1, 1, 5, 4});
  n.input("any", DType::float32, {2, 4});
  n.init("seed", DType::float32, {2, 4}, {0, 0.5, 3.5, 5, 2, 1, 5.5, 5.5});
  n.init("zero", DType::float32, {2, 4}, std::vector<double>(8, 0.0));
  n.init("batch", DType::int64, {2}, {0, 0});
  n.node("Mul", {"any", "zero"}, {"zeros"}, "zeros");
  n.node("Add", {"seed", "zeros"}, {"dyn"}, "not_constant");  // seed at run time
  auto& half = n.node("RoiAlign", {"x", "rois", "batch"}, {"a"}, "roi_half");
  set_attr(half, "output_height", int64_t{2});
  set_attr(half, "output_width", int64_t{3});
  set_attr(half, "spatial_scale", 0.5f);
  auto& dyn = n.node("RoiAlign", {"x", "dyn", "batch"}, {"b"}, "roi_dyn");
  set_attr(dyn, "output_height", int64_t{2});
  set_attr(dyn, "output_width", int64_t{2});
  set_attr(dyn, "sampling_ratio", int64_t{2});
  auto& out = n.node("RoiAlign", {"x", "rois", "batch"}, {"c"}, "roi_output_half");
  set_string(out, "coordinate_transformation_mode", "output_half_pixel");
  set_string(out, "mode", "max");
  add_output(n.g(), "a", DType::float32, {2, 2, 2, 3});
  add_output(n.g(), "b", DType::float32, {2, 2, 2, 2});
  add_output(n.g(), "c", DType::float32, {2, 2, 1, 1});
  // Before: "No Adapter From Version $16 for RoiAlign".
  UpgradeReport report;
  const Model down = converted(n.m, 15, false, &report);
  expect_same_outputs(n.m, down);
  CHECK(count_op(down, "Sub") == 1);
  for (const auto& node : down.proto.graph().node()) CHECK_FALSE(has_attr(node, "coordinate_transformation_mode"));
  bool warned = false;
  for (const auto& w : report.warnings) warned = warned || w.find("roi_dyn") != std::string::npos;
  CHECK(warned);
  const Model up = through(down, {16});
  CHECK(attr_of(first_node(up, "RoiAlign"), "coordinate_transformation_mode")->s() == "output_half_pixel");

  TestNet small(16);
  small.input("x", DType::float32, {1, 1, 4, 4});
  small.init("rois", DType::float32, {1, 4}, {0, 0, 1, 1});
  small.init("batch", DType::int64, {1}, {0});
  auto& s = small.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi_small");
  set_attr(s, "spatial_scale", 0.5f);
  add_output(small.g(), "y", DType::float32, {1, 1, 1, 1});
  const std::string e = upgrade_error_of(small.m, 15);
  INFO(e);
  CHECK(e.find("roi_small") != std::string::npos);
  CHECK(e.find("smaller than 1 x 1") != std::string::npos);
}

TEST_CASE("QuantizeLinear/DequantizeLinear 13+ -> 10: per-tensor scales as scalars, axis dropped, per-axis refused", "[upgrade][gaps]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 3});
  n.init("s", DType::float32, {1}, {0.05});
  n.init("zp", DType::uint8, {1}, {128});
  n.init("s0", DType::float32, {}, {0.1});
  set_attr(n.node("QuantizeLinear", {"x", "s", "zp"}, {"q"}, "quant"), "axis", int64_t{1});
  n.node("DequantizeLinear", {"q", "s0"}, {"y"}, "dequant");
  add_output(n.g(), "y", DType::float32, {2, 3});
  // Before: "No Adapter From Version $13 for QuantizeLinear".
  const Model down = through(n.m, {12, 10});
  CHECK_FALSE(has_attr(first_node(down, "QuantizeLinear"), "axis"));
  through(down, {13, 17, 21, 13, 10});

  TestNet high(21);  // DequantizeLinear-21 -> 12: 21 -> 17 by the table, 17 -> 12 by the step
  high.input("q", DType::uint8, {2, 3});
  high.init("s", DType::float32, {}, {0.5});
  high.init("zp", DType::uint8, {}, {3});
  set_attr(high.node("DequantizeLinear", {"q", "s", "zp"}, {"y"}, "dq21"), "block_size", int64_t{0});
  add_output(high.g(), "y", DType::float32, {2, 3});
  through(high.m, {17, 12, 10});

  TestNet per_axis(13);
  per_axis.input("q", DType::uint8, {2, 3});
  per_axis.init("s", DType::float32, {3}, {0.5, 0.25, 1});
  set_attr(per_axis.node("DequantizeLinear", {"q", "s"}, {"y"}, "dq_per_axis"), "axis", int64_t{1});
  add_output(per_axis.g(), "y", DType::float32, {2, 3});
  const std::string e = upgrade_error_of(per_axis.m, 12);
  INFO(e);
  CHECK(e.find("dq_per_axis") != std::string::npos);
  CHECK(e.find("per-axis scale") != std::string::npos);
}

TEST_CASE("Max, Min, Mean, Sum 8 <-> 7: same shapes cross, broadcasting inputs are refused by name", "[upgrade][gaps]") {
  TestNet n(13);
  n.input("a", DType::float32, {2, 3});
  n.input("b", DType::float32, {2, 3});
  n.node("Max", {"a", "b"}, {"mx"}, "max");
  n.node("Min", {"mx", "b"}, {"mn"}, "min");
  n.node("Mean", {"mn", "a", "b"}, {"me"}, "mean");
  n.node("Sum", {"me", "a"}, {"y"}, "sum");
  add_output(n.g(), "y", DType::float32, {2, 3});
  const Model down = through(n.m, {7, 6});
  CHECK_FALSE(has_attr(first_node(down, "Max"), "broadcast"));  // ONNX's adapter wrote one Max-6 does not have
  through(down, {8, 13});

  TestNet wide(8);
  wide.input("a", DType::float32, {2, 3});
  wide.input("b", DType::float32, {3});
  wide.node("Sum", {"a", "b"}, {"y"}, "sum_wide");
  add_output(wide.g(), "y", DType::float32, {2, 3});
  const std::string e = upgrade_error_of(wide.m, 7);
  INFO(e);
  CHECK(e.find("sum_wide") != std::string::npos);
  CHECK(e.find("[2, 3], [3]") != std::string::npos);
}

TEST_CASE("Reshape 5 <-> 4: a constant shape input <-> the attribute (an initializer, listed as a graph input at IR 3)", "[upgrade][gaps]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 3});
  n.init("shape", DType::int64, {2}, {3, -1});
  n.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  add_output(n.g(), "y", DType::float32, {3, 2});
  // Before: ONNX's adapter asserted (ir.h eraseOutput).
  const Model down = through(n.m, {4, 1});
  CHECK(first_node(down, "Reshape").input_size() == 1);
  Model ir3 = down;
  ir3.proto.set_ir_version(3);
  const Model up = through(ir3, {5, 13});  // ONNX's adapter wrote an int64 Constant, which opset 5 does not allow
  CHECK(first_node(up, "Reshape").input_size() == 2);

  TestNet dyn(13);
  dyn.input("x", DType::float32, {2, 3});
  dyn.input("shape", DType::int64, {2});
  dyn.node("Reshape", {"x", "shape"}, {"y"}, "reshape_dyn");
  add_output(dyn.g(), "y", DType::float32, {3, 2});
  const std::string e = upgrade_error_of(dyn.m, 4);
  INFO(e);
  CHECK(e.find("reshape_dyn") != std::string::npos);
  CHECK(e.find("not a constant") != std::string::npos);
}

TEST_CASE("Split 1 <-> 2: a constant split input becomes the attribute, LpPool/GlobalLpPool 1 <-> 2: p float <-> int", "[upgrade][gaps]") {
  TestNet n(1);
  n.input("x", DType::float32, {1, 2, 4, 4});
  n.init("sizes", DType::int64, {2}, {1, 3});
  set_attr(n.node("Split", {"x", "sizes"}, {"s1", "s2"}, "split"), "axis", int64_t{3});
  auto& lp = n.node("LpPool", {"s2"}, {"lp"}, "lppool");
  set_ints(lp, "kernel_shape", {2, 2});
  set_attr(lp, "p", 3.0f);
  set_attr(n.node("GlobalLpPool", {"s1"}, {"glp"}, "global_lppool"), "p", 1.0f);
  add_output(n.g(), "lp", DType::float32, {1, 2, 3, 2});
  add_output(n.g(), "glp", DType::float32, {1, 2, 1, 1});
  // Before: "No Adapter From Version $1 for Split", "No Adapter For GlobalLpPool".
  const Model up = through(n.m, {2, 13});
  CHECK(int_of(up, "LpPool", "p") == 3);
  CHECK(first_node(up, "Split").input_size() == 2);
  const Model down = through(up, {2, 1});
  CHECK(attr_of(first_node(down, "LpPool"), "p")->f() == 3.0f);

  TestNet frac(1);
  frac.input("x", DType::float32, {1, 1, 2, 2});
  set_attr(frac.node("GlobalLpPool", {"x"}, {"y"}, "lp_frac"), "p", 1.5f);
  add_output(frac.g(), "y", DType::float32, {1, 1, 1, 1});
  const std::string e = upgrade_error_of(frac.m, 2);
  INFO(e);
  CHECK(e.find("lp_frac") != std::string::npos);
  CHECK(e.find("not a whole number") != std::string::npos);
}

TEST_CASE("changes that only added types or documentation go down unchanged (Clip 6, Pow 12, NonMaxSuppression, MaxUnpool, LpPool 11)", "[upgrade][gaps]") {
  TestNet n(12);
  n.input("x", DType::float32, {1, 1, 4, 4});
  auto& pool = n.node("MaxPool", {"x"}, {"p", "i"}, "pool");
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {2, 2});
  auto& un = n.node("MaxUnpool", {"p", "i"}, {"u"}, "unpool");
  set_ints(un, "kernel_shape", {2, 2});
  set_ints(un, "strides", {2, 2});
  auto& lp = n.node("LpPool", {"u"}, {"l"}, "lppool");
  set_ints(lp, "kernel_shape", {2, 2});
  n.init("two", DType::float32, {}, {2});
  n.node("Pow", {"l", "two"}, {"pw"}, "pow");
  n.node("Clip", {"pw"}, {"y"}, "clip");
  n.init("boxes", DType::float32, {1, 2, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1});
  n.init("scores", DType::float32, {1, 1, 2}, {0.9, 0.8});
  n.init("keep", DType::int64, {1}, {2});
  n.init("iou", DType::float32, {1}, {0.5});
  n.node("NonMaxSuppression", {"boxes", "scores", "keep", "iou"}, {"sel"}, "nms");
  add_output(n.g(), "y", DType::float32, {1, 1, 3, 3});
  add_output(n.g(), "sel", DType::int64, {1, 3});
  // Before: "No Adapter To Version $11 for Pow", "No Adapter From Version $11 for MaxUnpool" (NonMaxSuppression, LpPool).
  const Model down = through(n.m, {11, 10});
  CHECK(first_node(down, "Pow").input_size() == 2);
  through(down, {12});

  TestNet clip(6);
  clip.input("x", DType::float32, {3});
  auto& c = clip.node("Clip", {"x"}, {"y"}, "clip");
  set_attr(c, "min", -0.5f);
  set_attr(c, "max", 0.5f);
  add_output(clip.g(), "y", DType::float32, {3});
  through(clip.m, {5, 1});  // Before: "No Adapter From Version $6 for Clip"
}

TEST_CASE("Loop 11 -> 10: kept with a loop-carried value, refused by name without one, and back", "[upgrade][gaps]") {
  auto loop_net = [](bool carried) {
    TestNet n(13);
    n.input("x0", DType::float32, {2});
    n.init("M", DType::int64, {}, {3});
    n.init("C", DType::boolean, {}, {1});
    auto& loop = n.node("Loop", carried ? std::vector<std::string>{"M", "C", "x0"} : std::vector<std::string>{"M", "C"},
                        {carried ? "xf" : "ys"}, carried ? "loop" : "loop_scan_only");
    auto* body = loop.add_attribute();
    body->set_name("body");
    body->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& b = *body->mutable_g();
    b.set_name("body");
    add_output(b, "i", DType::int64, {});
    add_output(b, "c", DType::boolean, {});
    if (carried) add_output(b, "x", DType::float32, {2});
    *b.mutable_input() = b.output();
    b.clear_output();
    auto* id = b.add_node();
    id->set_op_type("Identity");
    id->add_input("c");
    id->add_output("c2");
    auto* add = b.add_node();
    add->set_op_type("Add");
    add->add_input(carried ? "x" : "x0");
    add->add_input(carried ? "x" : "x0");
    add->add_output("x2");
    add_output(b, "c2", DType::boolean, {});
    add_output(b, "x2", DType::float32, {2});
    add_output(n.g(), carried ? "xf" : "ys", DType::float32, carried ? std::vector<int64_t>{2} : std::vector<int64_t>{3, 2});
    return n;
  };
  // Before: "No Adapter From Version $11 for Loop".
  const Model down = through(loop_net(true).m, {10, 9});
  through(down, {11, 13});
  const std::string e = upgrade_error_of(loop_net(false).m, 10);
  INFO(e);
  CHECK(e.find("loop_scan_only") != std::string::npos);
  CHECK(e.find("without loop-carried values") != std::string::npos);
}

TEST_CASE("Tile 1 -> 6: constant tiles and axis become repeats, down to Tile-1 refused by name", "[upgrade][gaps]") {
  TestNet n(5);
  n.input("x", DType::float32, {2, 3});
  n.init("tiles", DType::int64, {}, {3});
  n.init("axis", DType::int64, {}, {1});
  n.node("Tile", {"x", "tiles", "axis"}, {"y"}, "tile");
  add_output(n.g(), "y", DType::float32, {2, 9});
  // Before: "No Adapter From Version $5 for Tile".
  Model up = converted(n.m, 6);
  expect_same_outputs(n.m, up);
  CHECK(first_node(up, "Tile").input_size() == 2);
  through(up, {13});
  const std::string e = upgrade_error_of(up, 5);
  INFO(e);
  CHECK(e.find("'tile'") != std::string::npos);
  CHECK(e.find("Tile-1") != std::string::npos);
}

TEST_CASE("an int64 Less at 9+ cannot go to 8 (Less-7 has float types only): refused by name", "[upgrade][gaps]") {
  TestNet n(13);
  n.input("a", DType::int64, {2});
  n.input("b", DType::int64, {2});
  n.node("Less", {"a", "b"}, {"y"}, "less_int");
  add_output(n.g(), "y", DType::boolean, {2});
  // Before: ONNX's adapter kept it, and its checker let it through.
  const std::string e = upgrade_error_of(n.m, 8);
  INFO(e);
  CHECK(e.find("'less_int' (Less-13): input 0 'a' is tensor(int64), a type Less-7 does not have") != std::string::npos);
}

TEST_CASE("Upsample 7/9 -> 6: the scales become height_scale/width_scale of Upsample-1 (nearest), and back",
          "[upgrade][gaps]") {
  // Before: "No Adapter From Version $7 for Upsample" going down; going up
  // ONNX's Upsample_6_7 kept mode "bilinear", which Upsample-7 refuses.
  TestNet n(9);
  n.input("x", DType::float32, {1, 2, 3, 4});
  n.init("scales", DType::float32, {4}, {1, 1, 2, 3});
  n.node("Upsample", {"x", "scales"}, {"y"}, "up");
  add_output(n.g(), "y", DType::float32, {1, 2, 6, 12});
  const Model down = through(n.m, {6, 1});
  const auto& u = first_node(down, "Upsample");
  CHECK(attr_of(u, "height_scale")->f() == 2.0f);
  CHECK(attr_of(u, "width_scale")->f() == 3.0f);
  CHECK(attr_of(u, "mode")->s() == "nearest");
  through(down, {7, 9});
  CHECK(count_op(through(down, {13}), "Resize") == 1);  // from Upsample-1 straight to Resize

  // linear <-> bilinear is refused both ways: Upsample-1's bilinear has no
  // exact definition (docs/semantics.md).
  TestNet linear(9);
  linear.input("x", DType::float32, {1, 2, 3, 4});
  linear.init("scales", DType::float32, {4}, {1, 1, 2, 2});
  set_string(linear.node("Upsample", {"x", "scales"}, {"y"}, "up_linear"), "mode", "linear");
  add_output(linear.g(), "y", DType::float32, {1, 2, 6, 8});
  CHECK_THAT(upgrade_error_of(linear.m, 6), Catch::Contains("up_linear") && Catch::Contains("no exact definition"));
  Model bilinear = down;
  for (auto& node : *bilinear.proto.mutable_graph()->mutable_node()) {
    if (node.op_type() == "Upsample") const_cast<onnx::AttributeProto*>(attr_of(node, "mode"))->set_s("bilinear");
  }
  CHECK_THAT(upgrade_error_of(bilinear, 9), Catch::Contains("no exact definition"));

  TestNet batch(9);
  batch.input("x", DType::float32, {1, 2, 3, 4});
  batch.init("scales", DType::float32, {4}, {1, 2, 2, 2});
  batch.node("Upsample", {"x", "scales"}, {"y"}, "up_channels");
  add_output(batch.g(), "y", DType::float32, {1, 4, 6, 8});
  const std::string e = upgrade_error_of(batch.m, 6);
  CHECK_THAT(e, Catch::Contains("up_channels") && Catch::Contains("only the last two dims"));
}

TEST_CASE("LpPool-1 with a p that is no whole number (inf, 2.5) is refused going to 2, not cast", "[upgrade][gaps]") {
  for (const float p : {std::numeric_limits<float>::infinity(), 2.5f}) {
    INFO("p = " << p);
    TestNet n(1);
    n.input("x", DType::float32, {1, 1, 4, 4});
    auto& pool = n.node("LpPool", {"x"}, {"y"}, "lp");
    set_ints(pool, "kernel_shape", {2, 2});
    set_attr(pool, "p", p);
    add_output(n.g(), "y", DType::float32, {1, 1, 3, 3});
    CHECK_THAT(upgrade_error_of(n.m, 2), Catch::Contains("'lp'") && Catch::Contains("not a whole number"));
  }
}
