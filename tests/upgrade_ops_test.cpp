// bnorm upgrade on the ops around the normalization nodes where ONNX 1.12's
// converter alone fails: Dropout across every version, type-only schema
// changes going down (in staged conversions), Constant, Pad 1 <-> 2, sparse
// initializers, types of values old schemas cannot infer, unsorted graphs,
// and the clear errors where no conversion exists.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "support/test_graph.h"
#include "model/graph_order.h"
#include "support/cli.h"
#include "transforms/upgrade/upgrade.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

Model new_model(int64_t opset) {
  GraphBuilder b(opset);
  auto& m = const_cast<Model&>(b.model());
  m.proto.set_ir_version(std::max<int64_t>(3, required_ir_version(opset)));
  m.proto.mutable_graph()->set_name("g");
  return b.model();
}

onnx::GraphProto& graph_of(Model& m) { return *m.proto.mutable_graph(); }

void add_input(Model& m, const std::string& name, DType t, const std::vector<int64_t>& dims) {
  add_output(graph_of(m), name, t, dims);  // same ValueInfo shape
  *graph_of(m).add_input() = graph_of(m).output(graph_of(m).output_size() - 1);
  graph_of(m).mutable_output()->RemoveLast();
}

void add_init(Model& m, const std::string& name, const Tensor& t) {
  Tensor c = t;
  c.name = name;
  encode_tensor(c, graph_of(m).add_initializer());
}

onnx::NodeProto& add_node(Model& m, const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                          const std::string& name) {
  auto* n = graph_of(m).add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return *n;
}

// Dropout-12/13: X [2, 3], a constant ratio 0.3 and training_mode false;
// both Y and the mask are graph outputs.
Model dropout_13() {
  Model m = new_model(13);
  add_input(m, "x", DType::float32, {2, 3});
  add_init(m, "ratio", Tensor::from_f64(DType::float32, {}, {0.3}));
  Tensor tm(DType::boolean, {});
  tm.bytes[0] = 0;
  add_init(m, "training_mode", tm);
  add_node(m, "Dropout", {"x", "ratio", "training_mode"}, {"y", "mask"}, "drop");
  add_output(graph_of(m), "y", DType::float32, {2, 3});
  add_output(graph_of(m), "mask", DType::boolean, {2, 3});
  return m;
}


}  // namespace

TEST_CASE("Dropout goes down from 13 to every version and back with its ratio, mode and mask", "[upgrade]") {
  const Model m13 = dropout_13();
  const int64_t to = GENERATE(12, 11, 10, 9, 7, 6, 5, 1);
  INFO("to " << to);
  UpgradeReport r;
  const Model down = converted(m13, to, false, &r);
  const auto& d = first_node(down, "Dropout");
  if (to >= 12) {
    CHECK(d.input_size() == 3);
  } else {
    CHECK(d.input_size() == 1);
    REQUIRE(attr(d, "ratio"));
    CHECK(attr(d, "ratio")->f() == Approx(0.3f));
    CHECK_FALSE(attr(d, "seed"));
  }
  if (to < 7) {
    REQUIRE(attr(d, "is_test"));
    CHECK(attr(d, "is_test")->i() == 1);
  }
  // The mask is a graph output: below 10 (mask of type T) a Cast gives it back as bool.
  CHECK(count_op(down, "Cast") == (to < 10 ? 1 : 0));
  expect_same_outputs(m13, down);
  const Model up = converted(down, 15);
  CHECK(count_op(up, "Dropout") == 1);
  CHECK_FALSE(attr(first_node(up, "Dropout"), "is_test"));
  expect_same_outputs(m13, up);
}

TEST_CASE("Dropout-6 going up: ratio becomes an input, is_test goes, training is kept or declared inference", "[upgrade]") {
  for (int64_t is_test : {1, 0}) {
    Model m = new_model(6);
    add_input(m, "x", DType::float32, {2, 3});
    auto& n = add_node(m, "Dropout", {"x"}, {"y"}, "drop");
    set_attr(n, "ratio", 0.25f);
    set_attr(n, "is_test", is_test);
    add_output(graph_of(m), "y", DType::float32, {2, 3});
    INFO("is_test " << is_test);
    UpgradeReport r;
    const Model up = converted(m, 15, false, &r);
    const auto& d = first_node(up, "Dropout");
    CHECK_FALSE(attr(d, "is_test"));
    CHECK_FALSE(attr(d, "ratio"));
    REQUIRE(d.input_size() == (is_test ? 2 : 3));  // X, ratio (, training_mode = true)
    CHECK(r.warnings.empty() == (is_test == 1));
    if (is_test) expect_same_outputs(m, up);

    const Model declared = converted(m, 15, true, &r);
    CHECK(first_node(declared, "Dropout").input_size() == 2);
    CHECK(r.made_inference == std::vector<std::string>(is_test ? 0 : 1, "drop"));
    const Model mid = converted(m, 9, false, &r);
    CHECK(first_node(mid, "Dropout").input_size() == 1);
    CHECK(r.warnings.empty() == (is_test == 1));  // version 9 has no mode: said so
  }
}

TEST_CASE("Dropout whose training_mode is not a constant cannot go below 12", "[upgrade]") {
  Model m = dropout_13();
  graph_of(m).mutable_initializer()->RemoveLast();
  add_input(m, "training_mode", DType::boolean, {});
  const std::string e = upgrade_error_of(m, 11);
  CHECK(e.find("'drop'") != std::string::npos);
  CHECK(e.find("training_mode") != std::string::npos);
  CHECK(e.find("not a constant") != std::string::npos);
}

TEST_CASE("whole CNNs go down to opset 1 and back up with their numbers", "[upgrade][cli]") {
  TempDir tmp;
  for (const char* name : {"small_cnn_opset9.onnx", "resnet_block_opset9.onnx", "fold_cases_opset13.onnx",
                           "subgraph_if_opset11.onnx", "constant_params_opset12.onnx"}) {
    for (const char* target : {"1", "5", "6", "8", "10", "11"}) {
      INFO(name << " through opset 15 to " << target);
      const auto in = testdata(name).string();
      const auto up = (tmp / "15.onnx").string(), down = (tmp / "down.onnx").string(),
                 again = (tmp / "again.onnx").string();
      REQUIRE(run_cli({"-q", "upgrade", in, "-o", up}).exit_code == 0);
      const auto r = run_cli({"-q", "upgrade", up, "-o", down, "--to", target});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      REQUIRE(run_cli({"-q", "upgrade", down, "-o", again}).exit_code == 0);
      for (const auto& other : {down, again}) {
        const auto c = run_cli({"eval", in, "--compare", other, "--random", "4"});
        INFO(c.out << c.err);
        CHECK(c.exit_code == 0);
      }
    }
  }
}

TEST_CASE("below opset 6, outputs of schemas without type inference get declared types", "[upgrade]") {
  Model small = load_model(testdata("small_cnn_opset9.onnx"));
  const Model one = converted(small, 1);  // converted() runs the full check
  bool relu_typed = false;
  for (const auto& v : one.proto.graph().value_info()) relu_typed = relu_typed || v.name() == "relu1_out";
  CHECK(relu_typed);
  expect_same_outputs(small, one);
}

TEST_CASE("Constant-12 value_float/value_ints become `value` tensors going below 12", "[upgrade]") {
  Model m = new_model(13);
  add_input(m, "x", DType::float32, {2, 3});
  auto& c = add_node(m, "Constant", {}, {"k"}, "k");
  auto* a = c.add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(2.5f);
  add_node(m, "Mul", {"x", "k"}, {"y"}, "mul");
  add_output(graph_of(m), "y", DType::float32, {2, 3});
  const Model down = converted(m, 9);
  const auto& k = first_node(down, "Constant");
  REQUIRE(attr(k, "value"));
  CHECK(attr(k, "value")->t().float_data(0) == 2.5f);
  CHECK_FALSE(attr(k, "value_float"));
  expect_same_outputs(m, down);
}

TEST_CASE("Reshape-14 with allowzero = 0 and MatMul-13 go down to 8", "[upgrade]") {
  Model m = new_model(14);
  add_input(m, "x", DType::float32, {2, 3});
  add_init(m, "w", Tensor::from_f64(DType::float32, {3, 2}, {1, 2, 3, 4, 5, 6}));
  add_init(m, "shape", Tensor::from_f64(DType::int64, {1}, {4}));
  add_node(m, "MatMul", {"x", "w"}, {"p"}, "mm");
  set_attr(add_node(m, "Reshape", {"p", "shape"}, {"y"}, "rs"), "allowzero", int64_t{0});
  add_output(graph_of(m), "y", DType::float32, {4});
  const Model down = converted(m, 8);
  CHECK_FALSE(attr(first_node(down, "Reshape"), "allowzero"));
  expect_same_outputs(m, down);
}

TEST_CASE("Pad-1's paddings and Pad-2's pads are renamed both ways", "[upgrade]") {
  Model m = new_model(2);
  add_input(m, "x", DType::float32, {2, 3});
  auto& p = add_node(m, "Pad", {"x"}, {"y"}, "pad");
  auto* pads = p.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int v : {0, 1, 0, 1}) pads->add_ints(v);
  add_output(graph_of(m), "y", DType::float32, {2, 5});
  const Model one = converted(m, 1);
  CHECK(attr(first_node(one, "Pad"), "paddings"));
  const Model up = converted(one, 11);
  CHECK(first_node(up, "Pad").input_size() == 2);  // ONNX's 10 -> 11 adapter: pads as an input
  expect_same_outputs(m, up);
}

TEST_CASE("ops that do not exist yet at the target, and legacy broadcasts of unknown shapes, are named", "[upgrade]") {
  // ConstantOfShape below 9: an initializer when its shape is constant (it
  // was refused before), else named with why.
  Model m = new_model(9);
  add_input(m, "x", DType::float32, {2, 3});
  add_init(m, "shape", Tensor::from_f64(DType::int64, {1}, {3}));
  add_node(m, "ConstantOfShape", {"shape"}, {"c"}, "fill");
  add_node(m, "Add", {"x", "c"}, {"y"}, "add");
  add_output(graph_of(m), "y", DType::float32, {2, 3});
  const Model down = converted(m, 8);
  CHECK(count_op(down, "ConstantOfShape") == 0);
  expect_same_outputs(m, down);

  Model v = new_model(9);
  add_input(v, "x", DType::float32, {2, 3});
  add_input(v, "shape", DType::int64, {1});
  add_node(v, "ConstantOfShape", {"shape"}, {"c"}, "fill");
  add_node(v, "Add", {"x", "c"}, {"y"}, "add");
  add_output(graph_of(v), "y", DType::float32, {2, 3});
  const std::string e = upgrade_error_of(v, 8);
  CHECK(e.find("'fill'") != std::string::npos);
  CHECK(e.find("op 'ConstantOfShape' does not exist at opset 8") != std::string::npos);
  CHECK(e.find("is not a constant") != std::string::npos);

  Model b = new_model(9);
  add_input(b, "x", DType::float32, {2, 3});
  graph_of(b).mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  add_input(b, "z", DType::float32, {3});
  add_node(b, "Add", {"x", "z"}, {"y"}, "add");
  add_output(graph_of(b), "y", DType::float32, {2, 3});
  const std::string e2 = upgrade_error_of(b, 6);
  CHECK(e2.find("'add'") != std::string::npos);
  CHECK(e2.find("input 'x'") != std::string::npos);
}

TEST_CASE("an unsorted graph is sorted, with a warning, and passes the checker", "[upgrade]") {
  Model m = load_model(testdata("small_cnn_opset9.onnx"));
  auto* nodes = graph_of(m).mutable_node();
  nodes->SwapElements(0, nodes->size() - 1);
  REQUIRE_FALSE(is_topologically_sorted(m.proto.graph()));
  UpgradeReport r;
  const Model up = converted(m, 15, false, &r);
  CHECK(is_topologically_sorted(up.proto.graph()));
  bool warned = false;
  for (const auto& w : r.warnings) warned = warned || w.find("topological") != std::string::npos;
  CHECK(warned);
  expect_same_outputs(m, up);
}

TEST_CASE("an IR 3 model whose initializers are not graph inputs gets them listed", "[upgrade]") {
  Model m = load_model(testdata("small_cnn_opset8.onnx"));
  REQUIRE(m.proto.ir_version() == 3);
  auto* inputs = graph_of(m).mutable_input();
  while (inputs->size() > 1) inputs->RemoveLast();  // only the data input
  UpgradeReport r;
  const Model six = converted(m, 6, false, &r);
  CHECK(six.proto.graph().input_size() == six.proto.graph().initializer_size() + 1);
  CHECK_FALSE(r.warnings.empty());
}

TEST_CASE("attributes a norm schema does not have are dropped with a warning, BN-1 gets consumed_inputs", "[upgrade]") {
  Model m = new_model(1);
  add_input(m, "x", DType::float32, {1, 2, 3});
  for (const char* p : {"s", "b"}) add_init(m, p, Tensor::from_f64(DType::float32, {2}, {1.0, 0.5}));
  auto& in = add_node(m, "InstanceNormalization", {"x", "s", "b"}, {"y"}, "in");
  set_attr(in, "is_test", int64_t{1});  // what some old exporters wrote
  add_output(graph_of(m), "y", DType::float32, {1, 2, 3});
  UpgradeReport r;
  const Model six = converted(m, 6, false, &r);
  CHECK_FALSE(attr(first_node(six, "InstanceNormalization"), "is_test"));
  CHECK_FALSE(r.warnings.empty());
  expect_same_outputs(m, six);

  Model bn = new_model(1);
  add_input(bn, "x", DType::float32, {1, 2, 3});
  for (const char* p : {"s", "b", "mean", "var"}) add_init(bn, p, Tensor::from_f64(DType::float32, {2}, {1.0, 0.5}));
  set_attr(add_node(bn, "BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn"), "is_test", int64_t{1});
  add_output(graph_of(bn), "y", DType::float32, {1, 2, 3});
  const Model fixed = converted(bn, 1);
  CHECK(attr(first_node(fixed, "BatchNormalization"), "consumed_inputs"));
}

TEST_CASE("sparse initializers survive ONNX's converter", "[upgrade]") {
  Model m = load_model(testdata("every_field.onnx"));
  REQUIRE(m.proto.graph().sparse_initializer_size() > 0);
  const Model down = converted(m, 9);
  CHECK(down.proto.graph().sparse_initializer_size() == m.proto.graph().sparse_initializer_size());
  CHECK(down.proto.graph().input_size() == m.proto.graph().input_size());
}

TEST_CASE("Split-13 goes down and up by bnorm's own step: equal parts stay equal, a constant split moves",
          "[upgrade][regression]") {
  // Equal parts (no split input): ONNX 1.12's Split 13 -> 12 adapter crashed on it.
  Model m = new_model(13);
  add_input(m, "x", DType::float32, {6});
  add_node(m, "Split", {"x"}, {"a", "b"}, "");
  add_output(graph_of(m), "a", DType::float32, {3});
  add_output(graph_of(m), "b", DType::float32, {3});
  const Model down = converted(m, 11);
  CHECK(first_node(down, "Split").input_size() == 1);
  CHECK_FALSE(attr(first_node(down, "Split"), "split"));
  expect_same_outputs(m, down);
  expect_same_outputs(m, converted(down, 13));

  // Uneven parts from a constant input: an attribute below 13, an input again above.
  Model u = new_model(13);
  add_input(u, "x", DType::float32, {5});
  add_init(u, "sizes", Tensor::from_f64(DType::int64, {2}, {2, 3}));
  add_node(u, "Split", {"x", "sizes"}, {"a", "b"}, "split");
  add_output(graph_of(u), "a", DType::float32, {2});
  add_output(graph_of(u), "b", DType::float32, {3});
  const Model u11 = converted(u, 11);
  REQUIRE(attr(first_node(u11, "Split"), "split"));
  CHECK(first_node(u11, "Split").input_size() == 1);
  expect_same_outputs(u, u11);
  const Model u13 = converted(u11, 13);
  CHECK(first_node(u13, "Split").input_size() == 2);
  expect_same_outputs(u, u13);
}

TEST_CASE("sequence-typed graph outputs keep their type through ONNX's converter (it dropped them: checker refused)",
          "[upgrade]") {
  Model m = new_model(11);
  add_input(m, "x", DType::float32, {2, 3});
  auto& g = graph_of(m);
  auto node = [&](const std::string& op, std::vector<std::string> in, std::vector<std::string> out) -> onnx::NodeProto& {
    auto* n = g.add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return *n;
  };
  node("SequenceConstruct", {"x"}, {"s"});
  node("SequenceInsert", {"s", "x"}, {"s2"});
  auto& cat = node("ConcatFromSequence", {"s2"}, {"y"});
  auto* axis = cat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  add_output(g, "y", DType::float32, {4, 3});
  auto* seq = g.add_output();
  seq->set_name("s2");
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      static_cast<int32_t>(DType::float32));
  for (int64_t to : {13, 17, 11}) {
    INFO("to opset " << to);
    const Model out = converted(m, to);  // ONNX's full check
    REQUIRE(out.proto.graph().output(1).type().has_sequence_type());
    expect_same_outputs(m, out, {"y"});
  }
}

TEST_CASE("going up across 7, a legacy broadcast Add of unknown shapes is named, not ONNX's assertion", "[upgrade]") {
  // As WinML's candy (opset 1) going to 7: ONNX's BroadcastForwardCompatibility
  // asserted "Shape of input 2 is not available".
  Model m = new_model(6);
  add_input(m, "x", DType::float32, {1, 3, 4, 4});
  graph_of(m).mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  add_init(m, "b", Tensor::from_f64(DType::float32, {3}, {1, 2, 3}));
  auto& add = add_node(m, "Add", {"x", "b"}, {"y"}, "legacy_add");
  set_attr(add, "broadcast", int64_t{1});
  set_attr(add, "axis", int64_t{1});
  add_output(graph_of(m), "y", DType::float32, {1, 3, 4, 4});
  const std::string e = upgrade_error_of(m, 7);
  // bnorm's compare_7 step converts it (B unsqueezed to align at the axis) where X's rank is known.
  CHECK_THAT(e, Catch::Contains("legacy_add") && Catch::Contains("axis = 1") && Catch::Contains("ranks of both inputs"));
  CHECK_THAT(e, !Catch::Contains("Assertion"));
}

TEST_CASE("going down below 7, a legacy broadcast Add after a Reshape to a computed shape converts: bnorm's data propagation gives the shape", "[upgrade][infer]") {
  // y = Reshape(x, Concat(Gather(Shape(x), [0]), [-1])): ONNX 1.12's inference
  // (no data propagation) leaves y's dims unknown, and the adapter needs them.
  Model m = new_model(9);
  add_input(m, "x", DType::float32, {2, 3, 4});
  add_init(m, "zero", Tensor::from_f64(DType::int64, {1}, {0}));
  add_init(m, "minus_one", Tensor::from_f64(DType::int64, {1}, {-1}));
  add_init(m, "bias", Tensor::from_f64(DType::float32, {12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_node(m, "Gather", {"s", "zero"}, {"n"}, "gather");
  set_attr(add_node(m, "Concat", {"n", "minus_one"}, {"target"}, "concat"), "axis", int64_t{0});
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "reshape");
  add_node(m, "Add", {"y", "bias"}, {"z"}, "add");
  add_output(graph_of(m), "z", DType::float32, {2, 12});
  const Model down = converted(m, 6);
  const auto* b = attr_of(first_node(down, "Add"), "broadcast");
  REQUIRE(b);
  CHECK(b->i() == 1);
  expect_same_outputs(m, down);
}
