// Going down below the version where an op gained bfloat16: its bfloat16
// nodes compute in float between Casts (transforms/upgrade/steps/bf16_casts.cpp,
// transforms/upgrade/bf16_pass.cpp), or, with --no-casts, one error names every such node.
// The numbers are compared with the original's through the evaluator, bit
// for bit where the evaluator computes the bfloat16 node in float.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "support/test_graph.h"
#include "model/tensor.h"
#include "support/cli.h"
#include "transforms/upgrade/preflight.h"
#include "support/upgrade_support.h"

namespace bnorm::test {
namespace {

struct Net {
  GraphBuilder b;
  explicit Net(int64_t opset) : b(opset) {
    const_cast<Model&>(b.model()).proto.set_ir_version(std::max<int64_t>(3, required_ir_version(opset)));
    b.graph().set_name("g");
  }
  void out(const std::string& name, DType t, const std::vector<int64_t>& dims) { add_output(b.graph(), name, t, dims); }
  void param(const std::string& name, DType t, const std::vector<double>& v) {
    b.initializer(name, Tensor::from_f64(t, {static_cast<int64_t>(v.size())}, v));
  }
  const Model& model() const { return b.model(); }
};

// The outputs of `before` and `after` on the same seeded inputs, bit for bit.
void expect_same_bits(const Model& before, const Model& after) {
  const auto inputs = random_inputs(before, 11, {});
  const auto a = evaluate(before, inputs, {});
  const auto b = evaluate(after, inputs, {});
  for (const auto& kv : a) {
    INFO("output " << kv.first);
    REQUIRE(b.count(kv.first));
    CHECK(b.at(kv.first).dtype == kv.second.dtype);
    CHECK(b.at(kv.first).dims == kv.second.dims);
    CHECK(b.at(kv.first).bytes == kv.second.bytes);
  }
}

Model instance_norm_bf16(bool second = false) {
  Net n(22);
  n.b.input("x", DType::bfloat16, {2, 3, 4, 5});
  n.param("s", DType::bfloat16, {0.5, -1.25, 2});
  n.param("b", DType::bfloat16, {0.125, 0, -3});
  n.b.node("InstanceNormalization", {"x", "s", "b"}, {"y"}, "in");
  n.out("y", DType::bfloat16, {2, 3, 4, 5});
  if (second) {
    n.b.node("LpNormalization", {"x"}, {"z"}, "lp");
    n.out("z", DType::bfloat16, {2, 3, 4, 5});
    n.b.input("f", DType::float32, {2, 3, 4, 5});
    n.b.node("InstanceNormalization", {"f", "fs", "fb"}, {"g"}, "in_float");
    n.param("fs", DType::float32, {1, 2, 3});
    n.param("fb", DType::float32, {0, 0, 0});
    n.out("g", DType::float32, {2, 3, 4, 5});
  }
  return n.model();
}

std::string no_casts_error(const Model& m, int64_t to) {
  Model copy = m;
  UpgradeOptions o;
  o.target = to;
  o.casts = false;
  try {
    upgrade_model(copy, o);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a bfloat16 InstanceNormalization-22 computes in float between Casts below 22, with the same bits", "[upgrade][bf16]") {
  const Model in = instance_norm_bf16();
  const int64_t to = GENERATE(21, 18, 17, 13);
  INFO("to opset " << to);
  UpgradeReport r;
  const Model out = converted(in, to, false, &r);
  expect_same_bits(in, out);
  CHECK(count_op(out, "Cast") == 4);  // x, s, b to float; y back
  CHECK(first_node(out, "InstanceNormalization").input(0) != "x");
  REQUIRE(r.rewrites.size() >= 1);
  const OpRewrite& w = r.rewrites.front();
  CHECK(w.name == "in");
  CHECK(w.what.find("casts bfloat16 <-> float (InstanceNormalization-6 has no bfloat16") != std::string::npos);
  CHECK(w.added.size() == 4);
  // Back up: the float node between its Casts stays as it is.
  const Model up = converted(out, 22);
  expect_same_bits(in, up);
  CHECK(count_op(up, "Cast") == 4);
}

TEST_CASE("bfloat16 nodes whose target version has bfloat16 get no Casts", "[upgrade][bf16]") {
  Net n(17);
  n.b.input("x", DType::bfloat16, {1, 4, 3, 3});
  set_attr(n.b.node("LRN", {"x"}, {"y"}, "lrn"), "size", int64_t{3});
  n.out("y", DType::bfloat16, {1, 4, 3, 3});
  const Model out = converted(n.model(), 13);
  CHECK(count_op(out, "Cast") == 0);
  expect_same_bits(n.model(), out);

  const Model in22 = instance_norm_bf16();
  CHECK(count_op(converted(converted(in22, 21), 22), "Cast") == 4);  // up from 21: nothing more
}

TEST_CASE("a bfloat16 LpNormalization-22 computes in float between Casts below 22", "[upgrade][bf16]") {
  Net n(22);
  n.b.input("x", DType::bfloat16, {2, 3, 8});
  set_attr(n.b.node("LpNormalization", {"x"}, {"y"}, "lp"), "p", int64_t{1});
  n.out("y", DType::bfloat16, {2, 3, 8});
  for (int64_t to : {21, 13}) {
    INFO("to opset " << to);
    const Model out = converted(n.model(), to);
    CHECK(count_op(out, "Cast") == 2);
    expect_same_outputs(n.model(), out);
    // The evaluator computes LpNormalization in float64 and rounds once;
    // through float it rounds twice, which differs only on a bfloat16 tie:
    // none among these inputs.
    expect_same_bits(n.model(), out);
  }
}

TEST_CASE("BatchNormalization-15 of bfloat16 keeps bfloat16 at 14 and computes in float between Casts at 13", "[upgrade][bf16]") {
  const bool mixed = GENERATE(false, true);  // scale and B float beside X of bfloat16 (T1 != T)
  Net n(15);
  n.b.input("x", DType::bfloat16, {2, 3, 4});
  const DType p = mixed ? DType::float32 : DType::bfloat16;
  n.param("s", p, {0.5, 2, -1});
  n.param("b", p, {0.25, -1, 3});
  n.param("m", DType::bfloat16, {0.1, -0.2, 0.3});
  n.param("v", DType::bfloat16, {1, 0.5, 2});
  n.b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn");
  n.out("y", DType::bfloat16, {2, 3, 4});
  INFO("mixed " << mixed);
  const Model at14 = converted(n.model(), 14);
  CHECK(count_op(at14, "Cast") == (mixed ? 2 : 0));  // mixed: X to float and Y back (transforms/upgrade/steps/types.cpp)
  expect_same_bits(n.model(), at14);
  {
    UpgradeReport r;
    const Model out = converted(n.model(), 13, false, &r);
    expect_same_bits(n.model(), out);
    CHECK(count_op(out, "Cast") == (mixed ? 4 : 6));  // the bfloat16 inputs to float, Y back
    REQUIRE_FALSE(r.rewrites.empty());
    CHECK(r.rewrites.front().what.find("BatchNormalization-9 has no bfloat16") != std::string::npos);
  }
}

TEST_CASE("upgrade --no-casts refuses with one error naming every node that would need casts", "[upgrade][bf16]") {
  const Model in = instance_norm_bf16(true);
  const std::string e = no_casts_error(in, 21);
  INFO(e);
  CHECK(e.find("2 nodes would need casts to go to opset 21") != std::string::npos);
  CHECK(e.find("'in' (InstanceNormalization-22): InstanceNormalization-6 has no bfloat16; inputs 'x', 's', 'b' to "
               "float; output 'y' back to bfloat16") != std::string::npos);
  CHECK(e.find("'lp' (LpNormalization-22): LpNormalization-1 has no bfloat16") != std::string::npos);
  CHECK(e.find("in_float") == std::string::npos);
  // Nothing to cast: --no-casts changes nothing.
  const std::string none = no_casts_error(in, 22);
  CHECK(none.empty());
  // With casts, both convert.
  const Model out = converted(in, 21);
  CHECK(count_op(out, "Cast") == 6);
  expect_same_outputs(in, out);
}

TEST_CASE("bfloat16 below opset 13 is refused, naming the values or the nodes", "[upgrade][bf16]") {
  const std::string declared = upgrade_error_of(instance_norm_bf16(), 12);
  INFO(declared);
  CHECK(declared.find("graph input 'x' is tensor(bfloat16), a type no op has before opset 13") != std::string::npos);
  CHECK(declared.find("initializer 's'") != std::string::npos);

  // A bfloat16 value no declaration names: the node that computes in it.
  Net n(22);
  n.b.input("x", DType::float32, {1, 2, 3});
  set_attr(n.b.node("Cast", {"x"}, {"xb"}, "to_bf16"), "to", int64_t{16});
  n.b.node("LpNormalization", {"xb"}, {"yb"}, "lp");
  set_attr(n.b.node("Cast", {"yb"}, {"y"}, "to_float"), "to", int64_t{1});
  n.out("y", DType::float32, {1, 2, 3});
  const std::string inner = upgrade_error_of(n.model(), 12);
  INFO(inner);
  CHECK(inner.find("'lp' (LpNormalization-22): it computes in bfloat16, a type no op has before opset 13") !=
        std::string::npos);
  expect_same_bits(n.model(), converted(n.model(), 13));
}

TEST_CASE("the pre-flight plan says which nodes compute in float between Casts", "[upgrade][bf16]") {
  const UpgradePlan plan = plan_upgrade_model(instance_norm_bf16(true), 21);
  CHECK(plan.blockers.empty());
  int noted = 0;
  for (const auto& p : plan.nodes) {
    bool casts = false;
    for (const auto& c : p.changes) casts = casts || c.find("casts bfloat16 <-> float") != std::string::npos;
    CHECK(casts == (p.label == "in" || p.label == "lp"));
    noted += casts;
  }
  CHECK(noted == 2);
}

TEST_CASE("elementwise ops that only gained bfloat16 compute in float between Casts, with the same bits", "[upgrade][bf16]") {
  Net n(22);
  n.b.input("x", DType::bfloat16, {4, 16});
  const char* ops[] = {"Elu", "Selu", "HardSigmoid", "HardSwish", "Softplus", "Softsign", "ThresholdedRelu", "Round"};
  std::string cur = "x";
  for (const char* op : ops) {
    const std::string next = std::string(op) + "_out";
    n.b.node(op, {cur}, {next}, op);
    n.out(next, DType::bfloat16, {4, 16});  // every intermediate result compared
    cur = next;
  }
  const Model out = converted(n.model(), 21);
  CHECK(count_op(out, "Cast") == 16);
  expect_same_bits(n.model(), out);

  Net m(16);
  m.b.input("x", DType::bfloat16, {2, 3, 4});
  m.b.input("slope", DType::bfloat16, {3, 1});
  m.b.node("LeakyRelu", {"x"}, {"l"}, "leaky");
  m.b.node("PRelu", {"l", "slope"}, {"y"}, "prelu");
  m.out("y", DType::bfloat16, {2, 3, 4});
  const Model down = converted(m.model(), 13);
  CHECK(count_op(down, "Cast") == 5);  // x, slope, l to float, l and y back (l is a value of the graph)
  expect_same_bits(m.model(), down);
}

TEST_CASE("upgrade --no-casts exits 2 naming the node, without it the report lists the Casts", "[cli][upgrade][bf16]") {
  TempDir tmp;
  Model m = instance_norm_bf16();
  save_model(m, tmp / "in.onnx");
  const auto refused = run_cli({"upgrade", (tmp / "in.onnx").string(), "-o", (tmp / "out.onnx").string(), "--to", "21",
                                "--no-casts"});
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("node 'in' (InstanceNormalization-22): would need casts to go to opset 21 "
                                          "(InstanceNormalization-6 has no bfloat16; inputs 'x', 's', 'b' to float; "
                                          "output 'y' back to bfloat16), and --no-casts forbids"));
  CHECK_FALSE(std::filesystem::exists(tmp / "out.onnx"));
  const auto ok = run_cli({"upgrade", (tmp / "in.onnx").string(), "-o", (tmp / "out.onnx").string(), "--to", "21"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("casts bfloat16 <-> float"));
  CHECK(std::filesystem::exists(tmp / "out.onnx"));
}

}  // namespace bnorm::test
