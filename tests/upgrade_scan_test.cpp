// Scan 8 <-> 9 (issue 26): Scan-8 carries a batch axis on every input and
// output and an optional sequence_lens; Scan-9 has neither. ONNX 1.12's
// adapters only relabel shapes (8 -> 9 kept sequence_lens and the batch
// axis: a model onnxruntime refuses, "Scan input 0 was not a tensor").
// The expected numbers are Scan-8's own, computed by the evaluator on the
// model before conversion; the Scan-8 kernel's are tested against hand
// values in lib/eval/ops/control/loop_test.cpp.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "model/attrs.h"
#include "model/model_walk.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

void typed(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
           const std::vector<int64_t>& dims) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(DType::float32));
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// The body: s_out = s + x_t; y_t = s_out * x_t (s, x_t of shape [2]);
// `clip`: y_t clipped to [-20, 20] by a Clip-6 (attributes; inputs from 11).
void body(onnx::NodeProto& scan, bool clip = false) {
  auto* a = scan.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name("scan_body");
  typed(g->mutable_input(), "s", {2});
  typed(g->mutable_input(), "x_t", {2});
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("s");
  add->add_input("x_t");
  add->add_output("s_out");
  auto* mul = g->add_node();
  mul->set_op_type("Mul");
  mul->add_input("s_out");
  mul->add_input("x_t");
  mul->add_output(clip ? "m_t" : "y_t");
  if (clip) {
    auto* c = g->add_node();
    c->set_op_type("Clip");
    c->add_input("m_t");
    c->add_output("y_t");
    set_attr(*c, "min", -20.0f);
    set_attr(*c, "max", 20.0f);
  }
  typed(g->mutable_output(), "s_out", {2});
  typed(g->mutable_output(), "y_t", {2});
}

// Scan-8 over X [B, 3, 2] with state S0 [B, 2]; `lens`: "" (absent), "lens"
// (a graph input), or "const" (an initializer of B lengths `len`).
Model scan8(int64_t batch, int64_t direction, const std::string& lens = "", int64_t len = 3) {
  TestNet t(8);
  t.input("S0", DType::float32, {batch, 2});
  t.input("X", DType::float32, {batch, 3, 2});
  std::string lens_in;
  if (lens == "lens") {
    add_output(t.g(), "lens", DType::int64, {batch});
    *t.g().add_input() = t.g().output(t.g().output_size() - 1);
    t.g().mutable_output()->RemoveLast();
    lens_in = "lens";
  } else if (lens == "const") {
    t.init("lens", DType::int64, {batch}, std::vector<double>(static_cast<size_t>(batch), static_cast<double>(len)));
    lens_in = "lens";
  }
  auto& n = t.node("Scan", {lens_in, "S0", "X"}, {"S", "Y"}, "scan");
  set_attr(n, "num_scan_inputs", int64_t{1});
  if (direction != 0) set_ints(n, "directions", {direction});
  body(n, true);
  add_output(t.g(), "S", DType::float32, {batch, 2});
  add_output(t.g(), "Y", DType::float32, {batch, 3, 2});
  return t.m;
}

// Scan-9+ over X [3, 2] (or [2, 3] with in_axis 1) with state S0 [2].
Model scan9(int64_t opset, int64_t in_axis, int64_t in_dir, int64_t out_axis, int64_t out_dir) {
  TestNet t(opset);
  t.input("S0", DType::float32, {2});
  t.input("X", DType::float32, in_axis == 0 ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3});
  auto& n = t.node("Scan", {"S0", "X"}, {"S", "Y"}, "scan");
  set_attr(n, "num_scan_inputs", int64_t{1});
  if (in_axis != 0) set_ints(n, "scan_input_axes", {in_axis});
  if (in_dir != 0) set_ints(n, "scan_input_directions", {in_dir});
  if (out_axis != 0) set_ints(n, "scan_output_axes", {out_axis});
  if (out_dir != 0) set_ints(n, "scan_output_directions", {out_dir});
  body(n);
  add_output(t.g(), "S", DType::float32, {2});
  add_output(t.g(), "Y", DType::float32, out_axis == 0 ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3});
  return t.m;
}

const onnx::NodeProto* find_op(const onnx::GraphProto& g, const std::string& op) {
  for (const auto& n : g.node())
    if (n.op_type() == op) return &n;
  return nullptr;
}

}  // namespace

TEST_CASE("Scan-8 goes up to Scan-9+ with no batch axis and no sequence_lens, for any batch, with its numbers",
          "[upgrade][scan]") {
  for (const int64_t batch : {1, 3}) {
    for (const int64_t dir : {0, 1}) {
      for (const std::string lens : {"", "const"}) {
        const Model m = scan8(batch, dir, lens);
        for (const int64_t to : {9, 11, 16, 17, 21}) {
          INFO("batch " << batch << " direction " << dir << " lens '" << lens << "' -> " << to);
          const Model up = converted(m, to);
          // Every Scan of the result, its body's included, is a Scan of the new form: no empty first input.
          int scans = 0;
          for_each_graph(up.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
            for (const auto& n : g.node()) {
              if (n.op_type() != "Scan") continue;
              ++scans;
              REQUIRE(n.input_size() > 0);
              CHECK(!n.input(0).empty());
              CHECK(find_attr(n, "directions") == nullptr);
            }
          });
          CHECK(scans >= 1);
          // The body moved with the node: its Clip-6 has Clip-11's form above 10.
          for_each_graph(up.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
            for (const auto& n : g.node())
              if (n.op_type() == "Clip") CHECK((to < 11) == (find_attr(n, "min") != nullptr));
          });
          expect_same_outputs(m, up);
        }
      }
    }
  }
}

TEST_CASE("Scan-8 with sequence_lens that may be shorter than the sequence is refused going up, by name",
          "[upgrade][scan]") {
  for (const auto& m : {scan8(2, 0, "lens"), scan8(2, 0, "const", 2)}) {
    const std::string what = upgrade_error_of(m, 11);
    INFO(what);
    CHECK(what.find("'scan'") != std::string::npos);
    CHECK(what.find("sequence_lens") != std::string::npos);
  }
}

TEST_CASE("Scan-9+ goes down to Scan-8 with a batch axis of 1, with its numbers, and refuses what 8 cannot say",
          "[upgrade][scan]") {
  struct Case {
    int64_t in_axis, in_dir, out_axis, out_dir;
  };
  for (const Case c : {Case{0, 0, 0, 0}, Case{0, 1, 0, 0}, Case{1, 0, 0, 0}, Case{1, 1, 1, 0}}) {
    for (const int64_t from : {9, 11, 16}) {
      INFO("axes " << c.in_axis << "/" << c.out_axis << " direction " << c.in_dir << " from " << from);
      const Model m = scan9(from, c.in_axis, c.in_dir, c.out_axis, c.out_dir);
      const Model down = converted(m, 8);
      const auto* scan = find_op(down.proto.graph(), "Scan");
      REQUIRE(scan);
      CHECK(scan->input_size() == 3);
      CHECK(scan->input(0).empty());
      CHECK(find_attr(*scan, "scan_input_axes") == nullptr);
      expect_same_outputs(m, down);
      // And back up: the same numbers again.
      expect_same_outputs(m, converted(down, from));
    }
  }
  // A reversed scan output has no form at 8 (outputs are always appended there).
  const std::string what = upgrade_error_of(scan9(11, 0, 0, 0, 1), 8);
  INFO(what);
  CHECK(what.find("'scan'") != std::string::npos);
  CHECK(what.find("scan_output_directions") != std::string::npos);
}
