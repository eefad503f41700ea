// bnorm upgrade across 17..23: DFT-20, GridSample-20, attributes added
// with defaults, attribute values added, element types that do not exist
// at the target, the IR version, bnorm's schema check at 18+, and
// --verify (library and CLI). Numbers compared with the evaluator.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "support/test_graph.h"
#include "support/cli.h"
#include "transforms/upgrade/upgrade.h"
#include "transforms/upgrade/verify.h"
#include "support/lower_support.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

TEST_CASE("DFT 17 <-> 20: the axis attribute (default 1) becomes an input (default -2) and back", "[upgrade][high]") {
  for (const int64_t axis : {int64_t{-1}, int64_t{1}, int64_t{2}}) {  // -1: the attribute left out
    INFO("axis " << axis);
    Model m = net(17);
    input(m, "x", DType::float32, {2, 4, 3, 1});
    auto& d = node(m, "DFT", {"x"}, {"y"}, "dft");
    if (axis >= 0) set_attr(d, "axis", axis);
    add_output(g(m), "y", DType::float32, {2, 4, 3, 2});
    const Model up = through(m, {20, 23});
    REQUIRE(first_node(up, "DFT").input_size() == 3);
    CHECK_FALSE(has_attr(first_node(up, "DFT"), "axis"));
    const Model down = through(up, {18, 17});
    CHECK(attr_of(first_node(down, "DFT"), "axis")->i() == (axis < 0 ? 1 : axis));
  }
  Model absent = net(20);  // no axis input at 20: -2, the last signal axis
  input(absent, "x", DType::float32, {2, 4, 3, 1});
  node(absent, "DFT", {"x"}, {"y"}, "dft");
  add_output(g(absent), "y", DType::float32, {2, 4, 3, 2});
  const Model down = through(absent, {17});
  CHECK(attr_of(first_node(down, "DFT"), "axis")->i() == -2);
}

TEST_CASE("GridSample 16 <-> 20 renames bilinear/bicubic to linear/cubic, a 5-D GridSample stays at 20+", "[upgrade][high]") {
  for (const std::string mode : {"bilinear", "bicubic", "nearest"}) {
    INFO(mode);
    Model m = net(16);
    input(m, "x", DType::float32, {1, 2, 4, 4});
    input(m, "grid", DType::float32, {1, 3, 3, 2});
    set_string(node(m, "GridSample", {"x", "grid"}, {"y"}, "gs"), "mode", mode);
    add_output(g(m), "y", DType::float32, {1, 2, 3, 3});
    const Model up = through(m, {20, 22});
    const std::string renamed = mode == "nearest" ? "nearest" : mode.substr(2);
    CHECK(attr_of(first_node(up, "GridSample"), "mode")->s() == renamed);
    const Model down = through(up, {19, 16});
    CHECK(attr_of(first_node(down, "GridSample"), "mode")->s() == mode);
  }
  Model v = net(20);
  input(v, "x", DType::float32, {1, 1, 2, 2, 2});
  input(v, "grid", DType::float32, {1, 2, 2, 2, 3});
  node(v, "GridSample", {"x", "grid"}, {"y"}, "volume");
  add_output(g(v), "y", DType::float32, {1, 1, 2, 2, 2});
  const std::string e = upgrade_error_of(v, 16);
  CHECK(e.find("'volume' (GridSample-20): input 'x' has rank 5") != std::string::npos);
}

TEST_CASE("attributes added with defaults go down at their default and are refused at another value", "[upgrade][high]") {
  Model m = net(22);
  input(m, "x", DType::float32, {1, 1, 5, 5});
  auto& p = node(m, "AveragePool", {"x"}, {"p"}, "pool");
  set_ints(p, "kernel_shape", {2, 2});
  set_ints(p, "dilations", {1, 1});
  auto& c = node(m, "Cast", {"p"}, {"y"}, "cast");
  set_attr(c, "to", int64_t{11});
  set_attr(c, "saturate", int64_t{1});
  add_output(g(m), "y", DType::float64, {1, 1, 4, 4});
  const Model down = through(m, {18, 17, 11});
  CHECK_FALSE(has_attr(first_node(down, "AveragePool"), "dilations"));
  CHECK_FALSE(has_attr(first_node(down, "Cast"), "saturate"));

  Model wrap = net(19);
  input(wrap, "x", DType::float32, {2, 3});
  Tensor pads = Tensor::from_f64(DType::int64, {4}, {0, 1, 0, 1});
  pads.name = "pads";
  encode_tensor(pads, g(wrap).add_initializer());
  set_string(node(wrap, "Pad", {"x", "pads"}, {"y"}, "wrap_pad"), "mode", "wrap");
  add_output(g(wrap), "y", DType::float32, {2, 5});
  const std::string e = upgrade_error_of(wrap, 18);
  CHECK(e.find("'wrap_pad' (Pad-19): mode = 'wrap' was added at version 19") != std::string::npos);
}

TEST_CASE("an element type no op has at the target is refused naming it, IR follows the target and the types", "[upgrade][high]") {
  Model f8 = net(21);
  input(f8, "x", DType::float32, {2});
  auto& c = node(f8, "Cast", {"x"}, {"y"}, "to_f8");
  set_attr(c, "to", int64_t{17});
  add_output(g(f8), "y", DType::float8e4m3fn, {2});
  const std::string e = upgrade_error_of(f8, 18);
  CHECK(e.find("graph output 'y' is tensor(float8e4m3fn), a type no op has before opset 19 (IR 9)") != std::string::npos);
  UpgradeReport r;
  Model at19 = converted(f8, 19, false, &r);
  CHECK(at19.proto.ir_version() == 9);
  CHECK(r.to_ir == 9);

  Model plain = net(23);
  input(plain, "x", DType::float32, {2});
  node(plain, "Relu", {"x"}, {"y"}, "relu");
  add_output(g(plain), "y", DType::float32, {2});
  CHECK(converted(plain, 21).proto.ir_version() == 10);
  CHECK(converted(plain, 19).proto.ir_version() == 9);
  CHECK(converted(plain, 15).proto.ir_version() == 8);
  CHECK(converted(converted(plain, 15), 23).proto.ir_version() == 11);
}

TEST_CASE("bnorm's schema check at 18+ refuses every node that does not fit its schema, all at once", "[upgrade][high]") {
  Model m = net(19);
  input(m, "x", DType::float32, {2, 3});
  set_attr(node(m, "Relu", {"x"}, {"r"}, "relu"), "alpha", 1.0f);
  node(m, "ReduceMean", {"r", "a", "b"}, {"y"}, "mean");
  add_output(g(m), "y", DType::float32, {});
  try {
    check_model_full(m.proto);
    FAIL("no error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("'relu' (Relu-14): attribute 'alpha' is not an attribute of Relu-14") != std::string::npos);
    CHECK(msg.find("'mean' (ReduceMean-18): 3 inputs; the schema takes 1 to 2") != std::string::npos);
  }
}

TEST_CASE("upgrade --verify: same outputs pass and are written, a tampered result is reported off", "[upgrade][high][cli]") {
  Model m = net(12);
  input(m, "x", DType::float32, {2, 3});
  set_ints(node(m, "ReduceSum", {"x"}, {"y"}, "sum"), "axes", {1});
  add_output(g(m), "y", DType::float32, {2, 1});
  const Model up = converted(m, 23);
  VerifyInputs seed3;
  seed3.seed = 3;
  const auto checks = verify_upgrade(m, up, seed3).outputs;
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].pass);
  Model off = up;
  for (auto& n : *g(off).mutable_node())
    if (n.op_type() == "ReduceSum") n.set_op_type("ReduceMax");
  const auto bad = verify_upgrade(m, off, seed3).outputs;
  REQUIRE(bad.size() == 1);
  CHECK_FALSE(bad[0].pass);

  TempDir tmp;
  const std::string in = (tmp / "in.onnx").string(), out = (tmp / "out.onnx").string();
  save_model(m, in);
  const auto r = run_cli({"upgrade", in, "-o", out, "--to", "21", "--verify"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("verified   output 'y'") != std::string::npos);
  CHECK(std::filesystem::exists(out));
}

TEST_CASE("GroupNormalization 18 <-> 21: per-group scale and bias repeated per channel, and back when equal within groups", "[upgrade][high]") {
  for (const bool constant : {true, false}) {
    INFO("constant scale/bias " << constant);
    Model m = net(18);
    input(m, "x", DType::float32, {2, 4, 3});
    if (constant) {
      for (const auto& [name, v] : {std::pair<const char*, std::vector<double>>{"scale", {0.5, 2.0}}, {"bias", {1.0, -1.0}}}) {
        Tensor t = Tensor::from_f64(DType::float32, {2}, v);
        t.name = name;
        encode_tensor(t, g(m).add_initializer());
      }
    } else {
      input(m, "scale", DType::float32, {2});
      input(m, "bias", DType::float32, {2});
    }
    auto& gn = node(m, "GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn");
    set_attr(gn, "num_groups", int64_t{2});
    add_output(g(m), "y", DType::float32, {2, 4, 3});
    const Model up = through(m, {21, 23});
    CHECK(count_op(up, "Expand") == (constant ? 0 : 2));
    if (constant) through(up, {20, 18});
    else CHECK(upgrade_error_of(up, 20).find("input 'scale") != std::string::npos);
  }
  Model per_channel = net(21);
  input(per_channel, "x", DType::float32, {1, 4, 2});
  Tensor s = Tensor::from_f64(DType::float32, {4}, {1, 2, 3, 4});
  s.name = "scale";
  encode_tensor(s, g(per_channel).add_initializer());
  Tensor b = Tensor::from_f64(DType::float32, {4}, {0, 0, 0, 0});
  b.name = "bias";
  encode_tensor(b, g(per_channel).add_initializer());
  set_attr(node(per_channel, "GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn"), "num_groups", int64_t{2});
  add_output(g(per_channel), "y", DType::float32, {1, 4, 2});
  CHECK(upgrade_error_of(per_channel, 18).find("'gn' (GroupNormalization-21): input 'scale' differs within group 0") !=
        std::string::npos);
}

TEST_CASE("types beyond tensors are checked too: an OptionalGetElement-18 reading a sequence cannot go below 18", "[upgrade][high]") {
  Model m = net(18);
  auto* in = g(m).add_input();
  in->set_name("s");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(6);
  node(m, "OptionalGetElement", {"s"}, {"y"}, "get");
  auto* out = g(m).add_output();
  out->set_name("y");
  out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(6);
  const std::string e = upgrade_error_of(m, 17);
  CHECK(e.find("'get' (OptionalGetElement-18): input 0 's' is seq(tensor(int32)), a type OptionalGetElement-15 does "
               "not have") != std::string::npos);
  CHECK(upgrade_error_of(m, 21).empty());
}

TEST_CASE("a model at IR 9 or 10 going to opset <= 17 is written at IR 8, which ONNX 1.12's checker reads", "[upgrade][high]") {
  Model m = net(16);
  m.proto.set_ir_version(10);
  input(m, "x", DType::float32, {2});
  node(m, "Relu", {"x"}, {"y"}, "relu");
  add_output(g(m), "y", DType::float32, {2});
  CHECK(converted(m, 17).proto.ir_version() == 8);
  CHECK(converted(m, 13).proto.ir_version() == 8);
  CHECK(converted(m, 19).proto.ir_version() == 10);
}

TEST_CASE("Resize-18 axes going down: constant scales and sizes are expanded to every axis, antialias is refused", "[upgrade][high]") {
  for (const bool sizes : {false, true}) {
    INFO((sizes ? "sizes" : "scales"));
    Model m = net(19);
    input(m, "x", DType::float32, {1, 2, 3, 4});
    Tensor t = sizes ? Tensor::from_f64(DType::int64, {2}, {6, 8}) : Tensor::from_f64(DType::float32, {2}, {2, 2});
    t.name = "target";
    encode_tensor(t, g(m).add_initializer());
    auto& r = node(m, "Resize", sizes ? std::vector<std::string>{"x", "", "", "target"} : std::vector<std::string>{"x", "", "target"},
                   {"y"}, "resize");
    set_ints(r, "axes", {2, -1});
    set_string(r, "mode", "linear");
    add_output(g(m), "y", DType::float32, {1, 2, 6, 8});
    const Model down = through(m, {18, 17, 13});
    CHECK_FALSE(has_attr(first_node(down, "Resize"), "axes"));
    through(down, {18, 23});
  }
  Model aa = net(18);
  input(aa, "x", DType::float32, {1, 1, 4, 4});
  Tensor sc = Tensor::from_f64(DType::float32, {4}, {1, 1, 0.5, 0.5});
  sc.name = "scales";
  encode_tensor(sc, g(aa).add_initializer());
  auto& r = node(aa, "Resize", {"x", "", "scales"}, {"y"}, "smooth");
  set_attr(r, "antialias", int64_t{1});
  set_string(r, "mode", "linear");
  add_output(g(aa), "y", DType::float32, {1, 1, 2, 2});
  CHECK(upgrade_error_of(aa, 17).find("'smooth' (Resize-18): antialias = 1 has no equivalent below version 18") !=
        std::string::npos);
}
