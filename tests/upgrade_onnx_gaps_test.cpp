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
