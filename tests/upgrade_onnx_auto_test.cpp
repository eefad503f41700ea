// ONNX's version-converter tests, ported: one node of each op at its first
// opset, converted up to 23 and back down to that opset (the downgrade cases:
// from 23 down to their target and back up). Cases after ONNX's
// onnx/test/automatic_upgrade_test.py and automatic_downgrade_test.py
// (Apache-2.0); the models are built here, none is copied.
//
// The cases below 17 also go to 17 (ONNX's converter's last opset: its part
// alone) and back. Each case: the model passes the checks at its own opset; each conversion
// passes converted()'s checks (ONNX's checker with strict shape inference at
// <= 17, bnorm's structural check at every opset) and, unless the case says
// why not, gives the evaluator's outputs of the original on the same seeded
// inputs. A case bnorm refuses names the reason in the table, and the test
// asserts the refusal's words, so a change is noticed.
//
// Where ONNX's case is not a valid model (a wrong shape or type no runtime
// accepts), the table adapts it and says how ("adapted: ...").
// Numbers skipped (11 cases; conversion and checks still run): the random
// ops Bernoulli, Multinomial, RandomNormal, RandomNormalLike, RandomUniform,
// RandomUniformLike (no two runs agree); MaxRoiPool (bnorm's evaluator has
// no MaxRoiPool); StringNormalizer, RegexFullMatch (string inputs, which
// random_inputs does not draw); DFT_4 and STFT_4 (onesided of a complex
// signal, which ONNX's cases ask for: undefined, the evaluator refuses it).
// Refused: none (Scatter-9, which comes back from 23 as ScatterElements, was
// until ScatterElements below 11 became Scatter-9: the test below).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "support/test_graph.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// One value of a case: its element type and dims (-1: an unknown dim, in
// declared outputs only); `vals` makes an input an initializer; `absent` an
// empty optional input.
struct V {
  DType t = DType::float32;
  std::vector<int64_t> dims;
  std::vector<double> vals;
  bool absent = false;
};

V f(std::vector<int64_t> d) { return {DType::float32, std::move(d), {}, false}; }
V t(DType ty, std::vector<int64_t> d) { return {ty, std::move(d), {}, false}; }
V c(DType ty, std::vector<int64_t> d, std::vector<double> v) { return {ty, std::move(d), std::move(v), false}; }
V none() { return {DType::float32, {}, {}, true}; }

enum class Leg { none, there, back };

struct Case {
  const char* name;  // ONNX's test name (with _N for its several cases in one test)
  const char* op;
  int64_t opset;  // the model's opset
  std::vector<V> in = {f({3, 4, 5})};
  std::vector<V> out = {f({3, 4, 5})};
  Attrs attrs = {};
  int64_t far = 23;            // where it goes first; then back to `opset`
  const char* no_numbers = nullptr;  // why the numbers are not compared
  Leg refused = Leg::none;     // which leg bnorm refuses
  const char* why = nullptr;   // words of that refusal
};

#define ATTRS(...) [](onnx::NodeProto& n) { __VA_ARGS__; }
constexpr const char* kRandom = "random op: no two runs agree";
constexpr const char* kNoEval = "bnorm's evaluator has no MaxRoiPool";
constexpr const char* kStrings = "string input: random_inputs draws no strings";
constexpr const char* kOnesided = "onesided of a complex signal is undefined (the evaluator refuses it)";

// A value_info of `v` (an unknown dim for -1).
void declare(onnx::ValueInfoProto* vi, const std::string& name, const V& v) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.t));
  auto* shape = tt->mutable_shape();
  for (int64_t d : v.dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

Model build(const Case& k) {
  TestNet n(k.opset);
  std::vector<std::string> ins, outs;
  char letter = 'a';
  for (const V& v : k.in) {
    const std::string name(1, letter++);
    if (v.absent) {
      ins.push_back("");
    } else if (!v.vals.empty()) {
      n.init(name, v.t, v.dims, v.vals);
      ins.push_back(name);
    } else {
      declare(n.g().add_input(), name, v);
      ins.push_back(name);
    }
  }
  for (const V& v : k.out) {
    const std::string name(1, letter++);
    declare(n.g().add_output(), name, v);
    outs.push_back(name);
  }
  auto& node = n.node(k.op, ins, outs, std::string("n_") + k.op);
  if (k.attrs) k.attrs(node);
  return n.m;
}

// The case with its numbers skipped, for `why`.
Case nonum(Case k, const char* why) {
  k.no_numbers = why;
  return k;
}

// The case refused by bnorm on leg `l`, the error saying `why`.
Case refuse(Case k, Leg l, const char* why) {
  k.refused = l;
  k.why = why;
  return k;
}

void numbers(const Case& k, const Model& before, const Model& after) {
  if (!k.no_numbers) expect_same_outputs(before, after);
}

// One leg, `from` to opset `to`: the refusal the case expects there, or the
// conversion, checked, with the original's numbers. False when refused.
bool leg(const Case& k, Leg which, const Model& original, const Model& from, int64_t to, Model& out) {
  if (k.refused == which) {
    const std::string e = upgrade_error_of(from, to);
    INFO(e);
    CHECK(e.find(k.why) != std::string::npos);
    return false;
  }
  INFO((which == Leg::there ? "going to " : "coming back to ") << to);
  out = converted(from, to);
  CHECK(default_opset(out.proto) == to);
  numbers(k, original, out);
  return true;
}

void run(const Case& k) {
  const Model m = build(k);
  INFO(k.name << ": " << k.op << "-" << k.opset << " -> " << k.far << " -> " << k.opset);
  {
    INFO("the case itself at its opset");
    check_model_full(m.proto);
  }
  Model there, back;
  if (leg(k, Leg::there, m, m, k.far, there)) leg(k, Leg::back, m, there, k.opset, back);
}

// Every case; with `far`, only those below it, going to `far` instead of 23.
void run_all(const std::vector<Case>& cases, int64_t far = 0) {
  for (Case k : cases) {
    if (far && (k.opset >= far || k.far != 23)) continue;
    if (far) k.far = far;
    DYNAMIC_SECTION(k.name) { run(k); }
  }
}

// A Constant node of `dims` (values 0.5, 1.5, ...) as a subgraph's only node.
onnx::GraphProto constant_branch(const std::string& name, std::vector<int64_t> dims, double first) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type("Constant");
  n->add_output("out");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  encode_tensor(iota(DType::float32, dims, first), a->mutable_t());
  declare(g.add_output(), "out", f(dims));
  return g;
}

void set_graph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

void set_tensor(onnx::NodeProto& n, const std::string& name, const Tensor& t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  encode_tensor(t, a->mutable_t());
}

onnx::NodeProto* body_node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                           std::vector<std::string> out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g.node_size()));
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

// A Loop body reading (iter, cond_in, x_in of `dims`) and giving (cond_out =
// cond_in, x_out of `dims`, then the scanned outputs `scans`), its nodes
// added by `nodes`.
onnx::GraphProto loop_body(const std::vector<int64_t>& dims, const std::vector<std::string>& scans,
                           const std::function<void(onnx::GraphProto&)>& nodes) {
  onnx::GraphProto g;
  g.set_name("loop_body");
  declare(g.add_input(), "iter", t(DType::int64, {}));
  declare(g.add_input(), "cond_in", t(DType::boolean, {}));
  declare(g.add_input(), "x_in", f(dims));
  nodes(g);
  body_node(g, "Identity", {"cond_in"}, {"cond_out"});
  declare(g.add_output(), "cond_out", t(DType::boolean, {}));
  declare(g.add_output(), "x_out", f(dims));
  for (const std::string& out : scans) declare(g.add_output(), out, f(dims));
  return g;
}

// Loop_1's body: x_out = x_in + 1, also scanned out.
onnx::GraphProto loop_add_body() {
  return loop_body({1}, {"x_scan"}, [](onnx::GraphProto& g) {
    set_tensor(*body_node(g, "Constant", {}, {"one"}), "value", f32({1}, {1}));
    body_node(g, "Add", {"x_in", "one"}, {"x_out"});
    body_node(g, "Identity", {"x_out"}, {"x_scan"});
  });
}

// Loop_2's body: Squeeze then Unsqueeze of axis 1 (their axes attributes at 12).
onnx::GraphProto loop_squeeze_body() {
  return loop_body({2, 1}, {}, [](onnx::GraphProto& g) {
    set_ints(*body_node(g, "Squeeze", {"x_in"}, {"sq"}), "axes", {1});
    set_ints(*body_node(g, "Unsqueeze", {"sq"}, {"x_out"}), "axes", {1});
  });
}

// Scan's body: a running sum, also scanned out.
onnx::GraphProto scan_sum_body() {
  onnx::GraphProto g;
  g.set_name("scan_body");
  declare(g.add_input(), "sum_in", f({2}));
  declare(g.add_input(), "next_in", f({2}));
  body_node(g, "Add", {"sum_in", "next_in"}, {"sum_out"});
  body_node(g, "Identity", {"sum_out"}, {"scan_out"});
  declare(g.add_output(), "sum_out", f({2}));
  declare(g.add_output(), "scan_out", f({2}));
  return g;
}

const DType F32 = DType::float32, I64 = DType::int64, I32 = DType::int32, B = DType::boolean, U8 = DType::uint8,
            I8 = DType::int8;

#include "upgrade_onnx_auto_cases.inc"

}  // namespace

TEST_CASE("ONNX's upgrade cases Abs to HardSwish: up to 23 and back", "[upgrade][auto]") { run_all(cases_a_to_h()); }

TEST_CASE("ONNX's upgrade cases Hardmax to Pow: up to 23 and back", "[upgrade][auto]") { run_all(cases_h_to_p()); }

TEST_CASE("ONNX's upgrade cases PRelu to Xor and the ops from 15: up to 23 and back", "[upgrade][auto]") {
  run_all(cases_p_to_z());
}

TEST_CASE("ONNX's upgrade cases below 17: to 17 (ONNX's converter's last opset) and back", "[upgrade][auto]") {
  for (const auto& cases : {cases_a_to_h(), cases_h_to_p(), cases_p_to_z()}) run_all(cases, 17);
}

TEST_CASE("ONNX's downgrade cases (the Reduce ops 23 -> 13 with a constant axes input) and back", "[upgrade][auto]") {
  std::vector<Case> cases;
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMean", "ReduceMax",
                         "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"}) {
    Case k{op, op, 23, {f({3, 4, 5}), c(I64, {3}, {0, 1, 2})}, {f({1, 1, 1})}};
    k.far = 13;
    cases.push_back(k);
  }
  run_all(cases);
}

// Found by the OneHot case: below 11 the rewrite of negative indices took a
// floating index in (-1, 0) as negative (-0.5 + depth picked the last index,
// where OneHot truncates it to 0) and added depth before truncating (-1.5
// became depth - 2, not depth - 1). Constant indices and run-time ones.
TEST_CASE("OneHot 11 -> 10, 9: floating indices are truncated before negative ones count from the end", "[upgrade][auto]") {
  for (const bool constant : {true, false}) {
    INFO((constant ? "constant" : "run-time") << " indices");
    TestNet n(11);
    const std::vector<double> idx = {-0.5, -1.5, 2.7, -6, 0.5, -0.99};
    if (constant) {
      n.init("i", DType::float32, {6}, idx);
    } else {
      n.input("x", DType::float32, {6});
      n.init("base", DType::float32, {6}, idx);
      n.node("Mul", {"x", "base"}, {"xz"}, "zero_times");  // 0 * x + idx: the indices at run time
      n.init("zero", DType::float32, {}, {0});
      n.node("Mul", {"xz", "zero"}, {"z"}, "zeros");
      n.node("Add", {"z", "base"}, {"i"}, "indices");
    }
    n.init("depth", DType::float32, {}, {6});
    n.init("values", DType::float32, {2}, {-1, 3});
    n.node("OneHot", {"i", "depth", "values"}, {"y"}, "onehot");
    add_output(n.g(), "y", DType::float32, {6, 6});
    const Model down = through(n.m, {10, 9});
    through(down, {11});
  }
}

TEST_CASE("the port counts what docs/upgrade.md says", "[upgrade][auto]") {
  std::vector<Case> all = cases_a_to_h();
  for (const auto& more : {cases_h_to_p(), cases_p_to_z()}) all.insert(all.end(), more.begin(), more.end());
  size_t refused = 0, no_numbers = 0, below_17 = 0;
  for (const Case& k : all) {
    below_17 += k.opset < 17;
    refused += k.refused != Leg::none;
    no_numbers += k.no_numbers != nullptr;
  }
  CHECK(all.size() == 225);  // 221 ported, 4 of opsets 20 to 23; and 10 downgrade cases
  CHECK(refused == 0);
  CHECK(no_numbers == 11);   // the file's opening comment names them
  CHECK(below_17 == 194);    // also to 17 and back
}

// Found by the Scatter case: Scatter-9 goes up as ScatterElements, which
// could not come back below 11 ("does not exist at opset 9"). It is Scatter-9
// there, its negative axis and indices made non-negative as Gather's.
TEST_CASE("ScatterElements 11+ -> 10, 9 is Scatter-9: negative axis and indices made non-negative, and back", "[upgrade][auto]") {
  for (const bool constant : {true, false}) {
    INFO((constant ? "constant" : "run-time") << " indices");
    TestNet n(13);
    n.input("x", DType::float32, {2, 3});
    if (constant) {
      n.init("i", DType::int64, {2, 2}, {-1, 0, 2, -3});
    } else {
      n.input("i", DType::int64, {2, 2});
    }
    n.input("u", DType::float32, {2, 2});
    set_attr(n.node("ScatterElements", {"x", "i", "u"}, {"y"}, "scatter"), "axis", int64_t{-1});
    add_output(n.g(), "y", DType::float32, {2, 3});
    const Model down = through(n.m, {10, 9});
    const auto& s = first_node(down, "Scatter");
    CHECK(attr_of(s, "axis")->i() == 1);
    CHECK(count_op(down, "ScatterElements") == 0);
    through(down, {11, 16});
  }
  TestNet add(16);
  add.input("x", DType::float32, {2, 3});
  add.init("i", DType::int64, {1, 2}, {0, 1});
  add.input("u", DType::float32, {1, 2});
  set_string(add.node("ScatterElements", {"x", "i", "u"}, {"y"}, "scatter_add"), "reduction", "add");
  add_output(add.g(), "y", DType::float32, {2, 3});
  const std::string e = upgrade_error_of(add.m, 9);
  INFO(e);
  CHECK(e.find("scatter_add") != std::string::npos);
  CHECK(e.find("reduction") != std::string::npos);
  TestNet eight(11);
  eight.input("x", DType::float32, {2, 3});
  eight.input("i", DType::int64, {1, 2});
  eight.input("u", DType::float32, {1, 2});
  eight.node("ScatterElements", {"x", "i", "u"}, {"y"}, "scatter_8");
  add_output(eight.g(), "y", DType::float32, {2, 3});
  const std::string e8 = upgrade_error_of(eight.m, 8);
  INFO(e8);
  CHECK(e8.find("scatter_8") != std::string::npos);
}
