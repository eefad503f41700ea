// bnorm's own steps where ONNX 1.12's converter has no adapter at opsets
// <= 17, or keeps what the older schema forbids (transforms/upgrade/steps/onnx_gaps.h): each
// on a generated model that ONNX's converter alone fails on ("No Adapter
// From Version $11 for Gather", ... ; a negative axis kept at 10), converted
// down and back up with the same outputs (evaluator) and ONNX's checker on
// every result, and the cases that cannot convert refused by node name.
#include <catch2/catch.hpp>

#include <limits>

#include "support/test_graph.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/upgrade.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// The first value of attribute `attr` (int or ints) of the first `op` node.
int64_t int_of(const Model& m, const std::string& op, const std::string& attr) {
  const auto* a = attr_of(first_node(m, op), attr);
  REQUIRE(a);
  return a->type() == onnx::AttributeProto::INTS ? a->ints(0) : a->i();
}

}  // namespace

TEST_CASE("Gather 11 -> 10 and below: negative axis and constant indices made non-negative, other indices at run time, and back", "[upgrade][gaps]") {
  TestNet n(11);
  n.input("x", DType::float32, {3, 4});
  n.init("idx", DType::int64, {3}, {0, -1, 2});
  n.input("i", DType::int64, {2});
  n.init("seed", DType::int64, {2}, {-3, 1});
  n.init("zero", DType::int64, {2}, {0, 0});
  n.node("Mul", {"i", "zero"}, {"zeros"}, "zeros");
  n.node("Add", {"seed", "zeros"}, {"dyn"}, "not_constant");  // -3, 1 at run time
  set_attr(n.node("Gather", {"x", "idx"}, {"a"}, "gather_const"), "axis", int64_t{-1});
  n.node("Gather", {"a", "dyn"}, {"y"}, "gather_dyn");
  add_output(n.g(), "y", DType::float32, {2, 3});
  // Before: "No Adapter From Version $11 for Gather".
  const Model down = through(n.m, {10, 7, 6});  // int64 Mul/Add exist from 6
  CHECK(int_of(down, "Gather", "axis") == 1);
  CHECK(count_op(down, "Less") == 1);  // gather_dyn's indices only
  // The evaluator accepts negative indices at every version, so the numbers
  // alone would not see a constant left negative: its values are checked.
  for (const auto& node : down.proto.graph().node()) {
    if (node.name() != "gather_const") continue;
    bool found = false;
    for (const auto& t : down.proto.graph().initializer()) {
      if (t.name() != node.input(1)) continue;
      found = true;
      CHECK(decode_tensor(t).to_i64() == std::optional<std::vector<int64_t>>(std::vector<int64_t>{0, 3, 2}));
    }
    CHECK(found);
  }
  through(down, {7, 11, 13});

  TestNet sym(11);
  auto* x = sym.g().add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(DType::float32));
  tt->mutable_shape()->add_dim()->set_dim_param("n");
  sym.input("i", DType::int64, {1});
  sym.node("Gather", {"x", "i"}, {"y"}, "gather_sym");
  add_output(sym.g(), "y", DType::float32, {1});
  const std::string e = upgrade_error_of(sym.m, 10);
  INFO(e);
  CHECK(e.find("gather_sym") != std::string::npos);
  CHECK(e.find("may hold negative indices") != std::string::npos);
}

TEST_CASE("negative axes below 11 (Softmax family, Concat, ArgMax, Split, Compress, OneHot, Reduce, Scan) are made non-negative, and back", "[upgrade][gaps]") {
  TestNet n(11);
  n.input("x", DType::float32, {2, 3, 4});
  n.init("keep", DType::boolean, {4}, {1, 0, 1, 1});
  n.init("hot", DType::int64, {2}, {0, -1});
  n.init("depth", DType::int64, {}, {3});
  n.init("onoff", DType::float32, {2}, {0, 1});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) set_attr(n.node(op, {"x"}, {std::string(op) + "_y"}, op), "axis", int64_t{-1});
  set_attr(n.node("Concat", {"Softmax_y", "LogSoftmax_y"}, {"cat"}, "concat"), "axis", int64_t{-2});
  set_attr(n.node("ArgMax", {"Hardmax_y"}, {"am"}, "argmax"), "axis", int64_t{-1});
  set_attr(n.node("Split", {"cat"}, {"s1", "s2"}, "split"), "axis", int64_t{-2});
  set_attr(n.node("Compress", {"s1", "keep"}, {"cmp"}, "compress"), "axis", int64_t{-1});
  set_ints(n.node("ReduceMean", {"s1"}, {"rm"}, "reduce"), "axes", {-1, -3});
  set_attr(n.node("OneHot", {"hot", "depth", "onoff"}, {"oh"}, "onehot"), "axis", int64_t{-1});
  add_output(n.g(), "rm", DType::float32, {1, 3, 1});
  add_output(n.g(), "cmp", DType::float32, {2, 3, 3});
  add_output(n.g(), "am", DType::int64, {2, 3, 1});
  add_output(n.g(), "oh", DType::float32, {2, 3});
  // Before: "No Adapter From Version $11 for Hardmax" (Split, Compress, OneHot);
  // Softmax, Concat, ArgMax, ReduceMean kept axis -1 at 10, which opset 10 does not allow.
  const Model down = through(n.m, {10, 9});
  CHECK(int_of(down, "Softmax", "axis") == 2);
  CHECK(int_of(down, "Concat", "axis") == 1);
  CHECK(int_of(down, "Split", "axis") == 1);
  CHECK(int_of(down, "ReduceMean", "axes") == 2);
  CHECK(int_of(down, "OneHot", "axis") == 1);
  through(down, {11, 12});

  TestNet unranked(11);
  auto* x = unranked.g().add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DType::float32));
  set_attr(unranked.node("Hardmax", {"x"}, {"y"}, "hardmax_unranked"), "axis", int64_t{-1});
  add_output(unranked.g(), "y", DType::float32, {2});
  const std::string e = upgrade_error_of(unranked.m, 10);
  INFO(e);
  CHECK(e.find("hardmax_unranked") != std::string::npos);
  CHECK(e.find("rank is unknown") != std::string::npos);
}

TEST_CASE("ReduceSum 13 -> 12: a constant axes input becomes the attribute (ONNX's adapter asserted), and back", "[upgrade][gaps]") {
  TestNet n(13);
  n.input("x", DType::float32, {2, 3});
  n.init("axes", DType::int64, {1}, {-1});
  n.node("ReduceSum", {"x", "axes"}, {"y"}, "sum");
  add_output(n.g(), "y", DType::float32, {2, 1});
  const Model down = through(n.m, {12, 10});
  CHECK(first_node(down, "ReduceSum").input_size() == 1);
  CHECK(int_of(down, "ReduceSum", "axes") == 1);
  const Model up = through(down, {11, 13});
  CHECK(first_node(up, "ReduceSum").input_size() == 2);

  TestNet noop(13);
  noop.input("x", DType::float32, {2});
  set_attr(noop.node("ReduceSum", {"x"}, {"y"}, "sum_noop"), "noop_with_empty_axes", int64_t{1});
  add_output(noop.g(), "y", DType::float32, {2});
  CHECK(upgrade_error_of(noop.m, 12).find("noop_with_empty_axes") != std::string::npos);
}

TEST_CASE("Scan 11 -> 10: negative scan axes made non-negative, and on to Scan-8 with a batch of one", "[upgrade][gaps]") {
  TestNet n(11);
  n.input("s0", DType::float32, {3});
  n.input("xs", DType::float32, {4, 3});
  auto& scan = n.node("Scan", {"s0", "xs"}, {"sf", "ys"}, "scan");
  set_attr(scan, "num_scan_inputs", int64_t{1});
  set_ints(scan, "scan_input_axes", {-2});
  set_ints(scan, "scan_output_axes", {-1});
  auto* body = scan.add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& b = *body->mutable_g();
  b.set_name("body");
  add_output(b, "s", DType::float32, {3});
  add_output(b, "e", DType::float32, {3});
  *b.add_input() = b.output(0);
  *b.add_input() = b.output(1);
  b.clear_output();
  auto* add = b.add_node();
  add->set_op_type("Add");
  add->add_input("s");
  add->add_input("e");
  add->add_output("s2");
  auto* id = b.add_node();
  id->set_op_type("Identity");
  id->add_input("s2");
  id->add_output("o");
  add_output(b, "s2", DType::float32, {3});
  add_output(b, "o", DType::float32, {3});
  add_output(n.g(), "sf", DType::float32, {3});
  add_output(n.g(), "ys", DType::float32, {3, 4});
  const Model down = through(n.m, {10, 9});
  CHECK(int_of(down, "Scan", "scan_input_axes") == 0);
  CHECK(int_of(down, "Scan", "scan_output_axes") == 1);
  through(down, {11, 16});
  // Scan-8 (tests/upgrade_scan_test.cpp): the scan output stacked on axis 1 is moved there by a Transpose.
  through(n.m, {8, 11});
}

TEST_CASE("Equal, Greater, Less, And, Or, Xor 7 <-> 6: numpy broadcast <-> the legacy broadcast attribute", "[upgrade][gaps]") {
  TestNet n(13);
  n.input("a", DType::float32, {2, 3});
  n.input("b", DType::float32, {3});
  n.input("c", DType::float32, {2, 3});
  n.node("Less", {"a", "b"}, {"lt"}, "less");
  n.node("Greater", {"a", "c"}, {"gt"}, "greater");
  n.node("Xor", {"lt", "gt"}, {"x"}, "xor");
  n.node("Or", {"x", "lt"}, {"o"}, "or");
  n.node("And", {"o", "gt"}, {"y"}, "and");
  add_output(n.g(), "y", DType::boolean, {2, 3});
  // Before: "No Adapter From Version $7 for Less", "No Adapter For And".
  const Model down = through(n.m, {6, 1});
  CHECK(int_of(down, "Less", "broadcast") == 1);
  CHECK_FALSE(has_attr(first_node(down, "Greater"), "broadcast"));
  const Model up = through(down, {7, 13});
  CHECK_FALSE(has_attr(first_node(up, "Less"), "broadcast"));

  TestNet legacy(6);  // B aligned at axis 1 of A: numpy needs B [3, 1]
  legacy.input("a", DType::int64, {2, 3, 4});
  legacy.init("b", DType::int64, {3}, {0, 1, 2});
  auto& eq = legacy.node("Equal", {"a", "b"}, {"y"}, "equal_axis");
  set_attr(eq, "broadcast", int64_t{1});
  set_attr(eq, "axis", int64_t{1});
  add_output(legacy.g(), "y", DType::boolean, {2, 3, 4});
  const Model lup = through(legacy.m, {7, 13});
  CHECK(count_op(lup, "Unsqueeze") == 1);
  through(lup, {6});

  TestNet wide(13);  // A broadcast against B: no legacy form
  wide.input("a", DType::float32, {3});
  wide.input("b", DType::float32, {2, 3});
  wide.node("Less", {"a", "b"}, {"y"}, "less_wide");
  add_output(wide.g(), "y", DType::boolean, {2, 3});
  std::string e = upgrade_error_of(wide.m, 6);
  INFO(e);
  CHECK(e.find("less_wide") != std::string::npos);
  CHECK(e.find("[3] and [2, 3]") != std::string::npos);

  TestNet ints(13);  // Less-7 has no integer types
  ints.input("a", DType::int64, {2});
  ints.input("b", DType::int64, {2});
  ints.node("Less", {"a", "b"}, {"y"}, "less_int");
  add_output(ints.g(), "y", DType::boolean, {2});
  e = upgrade_error_of(ints.m, 6);
  INFO(e);
  CHECK(e.find("less_int") != std::string::npos);
  CHECK(e.find("tensor(int64)") != std::string::npos);
}

TEST_CASE("RNN, GRU, LSTM 7 <-> 6 and GRU 3 <-> 1: output_sequence, linear_before_reset, GRU-1's Y_h, and back", "[upgrade][gaps]") {
  TestNet n(14);
  n.input("x", DType::float32, {4, 1, 3});
  const int gates[] = {1, 3, 4};
  const char* ops[] = {"RNN", "GRU", "LSTM"};
  for (int k = 0; k < 3; ++k) {
    const std::string op = ops[k], w = op + "_W", r = op + "_R";
    std::vector<double> wv(gates[k] * 2 * 3), rv(gates[k] * 2 * 2);
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.1 * static_cast<double>((i * 7) % 11) - 0.5;
    for (size_t i = 0; i < rv.size(); ++i) rv[i] = 0.05 * static_cast<double>((i * 5) % 13) - 0.3;
    n.init(w, DType::float32, {1, gates[k] * 2, 3}, wv);
    n.init(r, DType::float32, {1, gates[k] * 2, 2}, rv);
    // GRU gives only Y: GRU-1 needs Y_h, which the step names.
    auto& node = n.node(op, {"x", w, r}, op == "GRU" ? std::vector<std::string>{op + "_y"} : std::vector<std::string>{op + "_y", op + "_h"}, op);
    set_attr(node, "hidden_size", int64_t{2});
    set_attr(node, "layout", int64_t{0});
    add_output(n.g(), op + "_y", DType::float32, {4, 1, 1, 2});
  }
  add_output(n.g(), "LSTM_h", DType::float32, {1, 1, 2});
  // Before: "No Adapter From Version $7 for LSTM" (GRU, RNN).
  const Model down = through(n.m, {13, 6, 1});
  CHECK(int_of(down, "LSTM", "output_sequence") == 1);
  CHECK(first_node(down, "GRU").output_size() == 2);
  CHECK_FALSE(has_attr(first_node(down, "GRU"), "layout"));
  const Model up = through(down, {3, 7, 14});
  CHECK_FALSE(has_attr(first_node(up, "RNN"), "output_sequence"));

  TestNet lbr(7);
  lbr.input("x", DType::float32, {2, 1, 3});
  lbr.init("W", DType::float32, {1, 6, 3}, std::vector<double>(18, 0.1));
  lbr.init("R", DType::float32, {1, 6, 2}, std::vector<double>(12, 0.2));
  auto& g = lbr.node("GRU", {"x", "W", "R"}, {"y"}, "gru_lbr");
  set_attr(g, "hidden_size", int64_t{2});
  set_attr(g, "linear_before_reset", int64_t{1});
  add_output(lbr.g(), "y", DType::float32, {2, 1, 1, 2});
  through(lbr.m, {3});
  std::string e = upgrade_error_of(lbr.m, 2);
  INFO(e);
  CHECK(e.find("gru_lbr") != std::string::npos);
  CHECK(e.find("linear_before_reset") != std::string::npos);

  TestNet batch_first(14);
  batch_first.input("x", DType::float32, {1, 2, 3});
  batch_first.init("W", DType::float32, {1, 2, 3}, std::vector<double>(6, 0.1));
  batch_first.init("R", DType::float32, {1, 2, 2}, std::vector<double>(4, 0.2));
  auto& l = batch_first.node("RNN", {"x", "W", "R"}, {"y"}, "rnn_layout");
  set_attr(l, "hidden_size", int64_t{2});
  set_attr(l, "layout", int64_t{1});
  add_output(batch_first.g(), "y", DType::float32, {1, 2, 1, 2});
  e = upgrade_error_of(batch_first.m, 6);
  INFO(e);
  CHECK(e.find("rnn_layout") != std::string::npos);
  CHECK(e.find("layout = 1") != std::string::npos);
}

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
