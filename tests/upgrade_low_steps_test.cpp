// bnorm's own steps up to opset 17 where ONNX 1.12's converter has no
// adapter going down (Clip 11 -> 10, Slice 10/11 -> 9, TopK 10/11 -> 9,
// Squeeze 11 -> 10) or ignores negative axes (Unsqueeze 11 -> 10), and a
// non-float Constant below 9: each both ways on generated models, checked
// with ONNX's checker and the evaluator (same outputs before and after).
#include <catch2/catch.hpp>

#include <limits>

#include "core/error.h"
#include "support/test_graph.h"
#include "transforms/upgrade/upgrade.h"
#include "transforms/upgrade/preflight.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

}  // namespace

TEST_CASE("Clip 11+ -> 10 and below: constant min/max become the attributes, and back", "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 3});
  n.init("lo", DType::float32, {}, {-0.25});
  n.init("hi", DType::float32, {}, {0.5});
  n.node("Clip", {"x", "lo", "hi"}, {"y"}, "clip");
  n.node("Clip", {"y", "", "hi"}, {"z"}, "clip_max_only");
  add_output(n.g(), "z", DType::float32, {2, 3});
  const Model down = through(n.m, {10, 6});
  CHECK(first_node(down, "Clip").input_size() == 1);
  CHECK(attr_of(first_node(down, "Clip"), "min")->f() == -0.25f);
  const Model up = through(down, {11, 13});
  CHECK(first_node(up, "Clip").input_size() == 3);

  TestNet dyn(12);
  dyn.input("x", DType::float32, {2});
  dyn.input("lo", DType::float32, {});
  dyn.node("Clip", {"x", "lo"}, {"y"}, "clip");
  add_output(dyn.g(), "y", DType::float32, {2});
  CHECK(upgrade_error_of(dyn.m, 10).find("input 'lo' (min) is not a constant") != std::string::npos);
}

TEST_CASE("a non-float Constant below 9 becomes an initializer read by an Identity", "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 3});
  auto& c = n.node("Constant", {}, {"shape"}, "shape_const");
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  Tensor s = Tensor::from_f64(DType::int64, {2}, {3, 2});
  encode_tensor(s, a->mutable_t());
  n.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  add_output(n.g(), "y", DType::float32, {3, 2});
  const Model down = through(n.m, {8, 5});
  CHECK(count_op(down, "Constant") == 0);
  CHECK(first_node(down, "Identity").name() == "shape_const");
  through(down, {9, 13});
}

TEST_CASE("Slice 10+ -> 9: constant starts/ends/axes become attributes (negative axes made positive), and back", "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {4, 5});
  n.init("starts", DType::int64, {2}, {1, 0});
  n.init("ends", DType::int64, {2}, {4, 3});
  n.init("axes", DType::int64, {2}, {-1, 0});
  n.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "slice");
  add_output(n.g(), "y", DType::float32, {3, 3});
  const Model down = through(n.m, {10, 9, 1});
  CHECK(attr_of(first_node(down, "Slice"), "axes")->ints(0) == 1);
  through(down, {10, 11, 13});

  TestNet stepped(13);
  stepped.input("x", DType::float32, {4});
  stepped.init("starts", DType::int64, {1}, {0});
  stepped.init("ends", DType::int64, {1}, {4});
  stepped.init("axes", DType::int64, {1}, {0});
  stepped.init("steps", DType::int64, {1}, {2});
  stepped.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "every_other");
  add_output(stepped.g(), "y", DType::float32, {2});
  CHECK(upgrade_error_of(stepped.m, 9).find("only steps by 1") != std::string::npos);
}

TEST_CASE("Slice 10 -> 9 keeps an end of INT64_MAX (to the end), which went through a double to INT64_MIN",
          "[upgrade][low]") {
  // As ulfd_rfb320 going 9 -> 10 -> 9: the slice [2:] came back empty.
  TestNet n(10);
  n.input("x", DType::float32, {1, 6, 4});
  n.init("starts", DType::int64, {1}, {2});
  Tensor end(DType::int64, {1}, "ends");
  end.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  encode_tensor(end, n.g().add_initializer());
  n.init("axes", DType::int64, {1}, {2});
  n.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "tail");
  add_output(n.g(), "y", DType::float32, {1, 6, 2});
  const Model down = through(n.m, {9});
  CHECK(attr_of(first_node(down, "Slice"), "ends")->ints(0) == std::numeric_limits<int64_t>::max());
  through(down, {10});
}

TEST_CASE("TopK 10/11 -> 9: the constant K becomes k, largest = 0 cannot go below 11", "[upgrade][low]") {
  TestNet n(11);
  n.input("x", DType::float32, {2, 5});
  n.init("k", DType::int64, {1}, {3});
  n.node("TopK", {"x", "k"}, {"v", "i"}, "topk");
  add_output(n.g(), "v", DType::float32, {2, 3});
  add_output(n.g(), "i", DType::int64, {2, 3});
  const Model down = through(n.m, {10, 9, 1});
  CHECK(attr_of(first_node(down, "TopK"), "k")->i() == 3);
  through(down, {10, 11, 15});

  TestNet smallest(11);
  smallest.input("x", DType::float32, {5});
  smallest.init("k", DType::int64, {1}, {2});
  set_attr(smallest.node("TopK", {"x", "k"}, {"v", "i"}, "bottom"), "largest", int64_t{0});
  add_output(smallest.g(), "v", DType::float32, {2});
  add_output(smallest.g(), "i", DType::int64, {2});
  CHECK(upgrade_error_of(smallest.m, 10).find("largest = 0") != std::string::npos);
}

TEST_CASE("Squeeze/Unsqueeze 13 -> 10: axes input -> attribute, negative axes made positive, and back", "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 1, 3});
  n.init("sq", DType::int64, {1}, {-2});
  n.init("unsq", DType::int64, {1}, {-1});
  n.node("Squeeze", {"x", "sq"}, {"s"}, "squeeze");
  n.node("Unsqueeze", {"s", "unsq"}, {"y"}, "unsqueeze");
  add_output(n.g(), "y", DType::float32, {2, 3, 1});
  const Model down = through(n.m, {11, 10, 1});
  CHECK(attr_of(first_node(down, "Squeeze"), "axes")->ints(0) == 1);
  CHECK(attr_of(first_node(down, "Unsqueeze"), "axes")->ints(0) == 2);
  const Model up = through(down, {11, 13, 21});
  CHECK(first_node(up, "Squeeze").input_size() == 2);
}

TEST_CASE("up to 17 too, every node that blocks is named in one error, and the pre-flight plan lists them", "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 3});
  n.input("shape", DType::int64, {2});
  n.node("ConstantOfShape", {"shape"}, {"a"}, "fill");
  n.node("NonZero", {"x"}, {"nz"}, "");
  n.node("Relu", {"x"}, {"y"}, "relu");
  add_output(n.g(), "y", DType::float32, {2, 3});
  add_output(n.g(), "a", DType::float32, {});
  add_output(n.g(), "nz", DType::int64, {});
  const std::string e = upgrade_error_of(n.m, 8);
  INFO(e);
  CHECK(e.find("2 nodes cannot be converted to opset 8") != std::string::npos);
  CHECK(e.find("'fill' (ConstantOfShape-9): op 'ConstantOfShape' does not exist at opset 8") != std::string::npos);
  CHECK(e.find("NonZero #1 -> 'nz' (NonZero-13)") != std::string::npos);
  const UpgradePlan plan = plan_upgrade_model(n.m, 8);
  CHECK(plan.blockers.size() == 2);
  bool relu = false;
  for (const auto& p : plan.nodes) {
    if (p.label != "relu") continue;
    relu = true;
    CHECK(p.from == 13);
    CHECK(p.to == 6);
    CHECK(p.by == "type-only");  // Relu-13 only added bfloat16
  }
  CHECK(relu);
  const UpgradePlan ok = plan_upgrade_model(n.m, 15);
  CHECK(ok.blockers.empty());
  CHECK(ok.to_ir == 8);
}

TEST_CASE("attributes added with defaults up to 17 go down at their default, ops without ONNX adapters below 6 go down unchanged", "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {1, 4, 3, 3});
  auto& pool = n.node("AveragePool", {"x"}, {"p"}, "pool");
  set_ints(pool, "kernel_shape", {2, 2});
  set_attr(pool, "ceil_mode", int64_t{0});
  auto& d2s = n.node("DepthToSpace", {"p"}, {"d"}, "d2s");
  set_attr(d2s, "blocksize", int64_t{2});
  auto* mode = d2s.add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("DCR");
  n.node("Sigmoid", {"d"}, {"s"}, "sigmoid");
  n.node("Tanh", {"s"}, {"y"}, "tanh");
  add_output(n.g(), "y", DType::float32, {1, 1, 4, 4});
  const Model down = through(n.m, {10, 9, 5, 1});
  CHECK_FALSE(has_attr(first_node(down, "AveragePool"), "ceil_mode"));
  CHECK_FALSE(has_attr(first_node(down, "DepthToSpace"), "mode"));
  through(down, {6, 13, 17});

  TestNet crd(13);
  crd.input("x", DType::float32, {1, 4, 1, 1});
  auto& c = crd.node("DepthToSpace", {"x"}, {"y"}, "crd");
  set_attr(c, "blocksize", int64_t{2});
  auto* m2 = c.add_attribute();
  m2->set_name("mode");
  m2->set_type(onnx::AttributeProto::STRING);
  m2->set_s("CRD");
  add_output(crd.g(), "y", DType::float32, {1, 1, 2, 2});
  CHECK(upgrade_error_of(crd.m, 10).find("DepthToSpace") != std::string::npos);
}

TEST_CASE("Resize 13 -> 11/10 and to Upsample 9/7 where the result is the same, other modes refused by name", "[upgrade][low]") {
  for (const std::string mode : {"nearest", "linear"}) {
    INFO(mode);
    TestNet n(13);
    n.input("x", DType::float32, {1, 1, 2, 3});
    n.init("scales", DType::float32, {4}, {1, 1, 2, 2});
    auto& r = n.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
    for (const auto& [name, value] : {std::pair<const char*, std::string>{"mode", mode},
                                      {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}}) {
      auto* a = r.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(value);
    }
    add_output(n.g(), "y", DType::float32, {1, 1, 4, 6});
    const Model at11 = through(n.m, {12, 11});
    CHECK(first_node(at11, "Resize").input_size() == 3);
    const Model down = through(at11, {10, 9, 7});
    CHECK(count_op(down, "Upsample") == 1);
    CHECK(attr_of(first_node(down, "Upsample"), "scales")->floats_size() == 4);
    through(down, {9, 10, 11, 13});
  }
  TestNet half(13);
  half.input("x", DType::float32, {1, 1, 2, 3});
  half.init("scales", DType::float32, {4}, {1, 1, 2, 2});
  half.node("Resize", {"x", "", "scales"}, {"y"}, "half_pixel_resize");
  add_output(half.g(), "y", DType::float32, {1, 1, 4, 6});
  const std::string e = upgrade_error_of(half.m, 10);
  CHECK(e.find("'half_pixel_resize'") != std::string::npos);
  CHECK(e.find("coordinate_transformation_mode 'half_pixel'") != std::string::npos);
}

TEST_CASE("Upsample and Resize-10 going up to 11+ keep their numbers: asymmetric coordinates, not ONNX's half_pixel", "[upgrade][low]") {
  for (const std::string mode : {"nearest", "linear"}) {
    for (const bool upsample : {true, false}) {
      INFO(mode << (upsample ? " Upsample-9" : " Resize-10"));
      TestNet n(upsample ? 9 : 10);
      n.input("x", DType::float32, {1, 1, 3, 3});
      n.init("scales", DType::float32, {4}, {1, 1, 2, 3});
      auto& r = n.node(upsample ? "Upsample" : "Resize", {"x", "scales"}, {"y"}, "up");
      auto* a = r.add_attribute();
      a->set_name("mode");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(mode);
      add_output(n.g(), "y", DType::float32, {1, 1, 6, 9});
      const Model up = through(n.m, {11, 13, 18});
      CHECK(attr_of(first_node(up, "Resize"), "coordinate_transformation_mode")->s() == "asymmetric");
      if (upsample) through(n.m, {10});
    }
  }
}

TEST_CASE("going down across type-only changes up to 17, a type the target lacks is named with its node", "[upgrade][low]") {
  TestNet n(14);
  n.input("a", DType::uint8, {2});
  n.input("b", DType::uint8, {2});
  n.node("Add", {"a", "b"}, {"s"}, "add_u8");
  n.node("Mul", {"s", "b"}, {"y"}, "");
  add_output(n.g(), "y", DType::uint8, {2});
  const std::string e = upgrade_error_of(n.m, 13);
  INFO(e);
  CHECK(e.find("2 nodes cannot be converted to opset 13") != std::string::npos);
  CHECK(e.find("'add_u8' (Add-14): input 0 'a' is tensor(uint8), a type Add-13 does not have") != std::string::npos);
  CHECK(e.find("Mul #1 -> 'y' (Mul-14)") != std::string::npos);
  through(n.m, {14});  // nothing to check at 14 itself
}

TEST_CASE("Upsample 9 <-> 7/8 by bnorm's step: a constant scales input becomes the attribute, even shared by two "
          "nodes, and a non-constant one is refused by name",
          "[upgrade][low][regression]") {
  // ONNX 1.12's adapter asserted (ir.h eraseOutput) when the scales input fed two Upsample nodes.
  TestNet n(9);
  n.input("x", DType::float32, {1, 1, 2, 2});
  n.init("scales", DType::float32, {4}, {1, 1, 2, 2});
  n.node("Upsample", {"x", "scales"}, {"y1"}, "up1");
  n.node("Upsample", {"x", "scales"}, {"y2"}, "up2");
  add_output(n.g(), "y1", DType::float32, {1, 1, 4, 4});
  add_output(n.g(), "y2", DType::float32, {1, 1, 4, 4});
  const Model down = through(n.m, {8, 7});
  CHECK(first_node(down, "Upsample").input_size() == 1);
  REQUIRE(attr_of(first_node(down, "Upsample"), "scales"));
  CHECK(attr_of(first_node(down, "Upsample"), "scales")->floats_size() == 4);
  const Model up = through(down, {9});
  CHECK(first_node(up, "Upsample").input_size() == 2);

  TestNet dyn(9);
  dyn.input("x", DType::float32, {1, 1, 2, 2});
  dyn.input("s", DType::float32, {4});
  dyn.node("Upsample", {"x", "s"}, {"y"}, "up");
  add_output(dyn.g(), "y", DType::float32, {1, 1, 4, 4});
  const std::string e = upgrade_error_of(dyn.m, 8);
  CHECK(e.find("input 's' (scales) is not a constant") != std::string::npos);
  CHECK(e.find("Assertion") == std::string::npos);
}

TEST_CASE("Resize goes below 7 as Upsample-1 when it scales height and width only, and inspect --to plans it",
          "[upgrade][low]") {
  TestNet n(13);
  n.input("x", DType::float32, {1, 2, 3, 4});
  n.init("roi", DType::float32, {0}, {});
  n.init("scales", DType::float32, {4}, {1, 1, 2, 2});
  auto& r = n.node("Resize", {"x", "roi", "scales"}, {"y"}, "resize");
  set_string(r, "coordinate_transformation_mode", "asymmetric");
  set_string(r, "nearest_mode", "floor");
  add_output(n.g(), "y", DType::float32, {1, 2, 6, 8});
  const Model down = through(n.m, {6});
  CHECK(attr_of(first_node(down, "Upsample"), "height_scale")->f() == 2.0f);
  for (int64_t to : {9, 6}) {
    INFO("inspect --to " << to);
    const UpgradePlan plan = plan_upgrade_model(n.m, to);
    CHECK(plan.blockers.empty());
  }
}

TEST_CASE("a rank shape inference leaves unknown follows from the producer: Flatten, Reshape, rank-keeping ops",
          "[upgrade][low]") {
  // As ulfd_rfb320 13 -> 9: a Softmax over the last axis of a value whose
  // rank ONNX's inference leaves unknown (a Reshape to a computed shape) was
  // refused. Reshape's rank is its shape input's length; Flatten's is 2.
  TestNet n(13);
  n.input("x", DType::float32, {2, 3, 4});
  n.node("Shape", {"x"}, {"s"}, "shape");
  n.node("Reshape", {"x", "s"}, {"r"}, "reshape");
  n.node("Relu", {"r"}, {"a"}, "relu");
  set_attr(n.node("Softmax", {"a"}, {"y1"}, "softmax_3d"), "axis", int64_t{-1});
  set_attr(n.node("Flatten", {"r"}, {"f"}, "flatten"), "axis", int64_t{1});
  set_attr(n.node("Softmax", {"f"}, {"y2"}, "softmax_2d"), "axis", int64_t{-1});
  add_output(n.g(), "y1", DType::float32, {2, 3, 4});
  add_output(n.g(), "y2", DType::float32, {2, 12});
  const Model down = through(n.m, {10});
  for (const auto& node : down.proto.graph().node()) {
    if (node.name() == "softmax_3d") CHECK(attr_of(node, "axis")->i() == 2);
    if (node.name() == "softmax_2d") CHECK(attr_of(node, "axis")->i() == 1);
  }
  through(down, {13});
}
