// upgrade --fuse-norms (lib/transforms/fuse/fuse_norms.cpp, layernorm.cpp):
// LayerNormalization decompositions as exporters write them, generated
// here, become LayerNormalization at the target opset, with the same
// outputs through the evaluator, in subgraphs too; near misses are left and
// reported with their reason, on the command line as in the JSON. RMS and
// GroupNormalization: upgrade_fuse_rms_gn_test.cpp; other forms:
// upgrade_fuse_forms_test.cpp.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/test_graph.h"
#include "model/tensor_proto.h"
#include "support/cli.h"
#include "support/fuse_support.h"
#include "support/upgrade_support.h"

namespace bnorm::test {

namespace {

// A LayerNormalization decomposition as PyTorch exports it before opset 17.
struct LnSpec {
  std::vector<int64_t> dims{2, 3, 8};
  std::vector<int64_t> axes{-1};
  bool scale = true, bias = true;
  bool pow = true;          // Pow(D, 2), else Mul(D, D)
  bool div = true;          // Div(D, S), else Mul(D, Reciprocal(S))
  bool eps_input = false;   // epsilon a graph input, not a constant
  bool d_output = false;    // D also a graph output (a second reader)
  int64_t opset = 15;
};

Model layernorm_model(const LnSpec& s) {
  GraphBuilder b(s.opset);
  b.input("x", DType::float32, s.dims);
  int64_t size = 1;
  std::vector<int64_t> norm_dims;
  for (int64_t a : s.axes) {
    const int64_t axis = a < 0 ? a + static_cast<int64_t>(s.dims.size()) : a;
    norm_dims.push_back(s.dims[axis]);
    size *= s.dims[axis];
  }
  auto mean = [&](const std::string& in, const std::string& out, const std::string& name) {
    onnx::NodeProto& n = b.node("ReduceMean", {in}, {out}, name);
    set_ints(n, "axes", s.axes);
  };
  mean("x", "mean", "/ln/ReduceMean");
  b.node("Sub", {"x", "mean"}, {"d"}, "/ln/Sub");
  if (s.pow) {
    b.initializer("two", f32({}, {2.0}));
    b.node("Pow", {"d", "two"}, {"sq"}, "/ln/Pow");
  } else {
    b.node("Mul", {"d", "d"}, {"sq"}, "/ln/Square");
  }
  mean("sq", "var", "/ln/ReduceMean_1");
  if (s.eps_input) {
    b.input("eps", DType::float32, {});
  } else {
    b.initializer("eps", f32({}, {1e-5}));
  }
  b.node("Add", {"var", "eps"}, {"ve"}, "/ln/Add");
  b.node("Sqrt", {"ve"}, {"sd"}, "/ln/Sqrt");
  if (s.div) {
    b.node("Div", {"d", "sd"}, {"n"}, "/ln/Div");
  } else {
    b.node("Reciprocal", {"sd"}, {"inv"}, "/ln/Reciprocal");
    b.node("Mul", {"inv", "d"}, {"n"}, "/ln/Mul_inv");
  }
  std::string y = "n";
  if (s.scale) {
    b.initializer("gamma", random_tensor(DType::float32, norm_dims, 3));
    b.node("Mul", {y, "gamma"}, {"scaled"}, "/ln/Mul");
    y = "scaled";
  }
  if (s.bias) {
    b.initializer("beta", random_tensor(DType::float32, norm_dims, 4));
    b.node("Add", {y, "beta"}, {"biased"}, "/ln/Add_1");
    y = "biased";
  }
  b.node("Relu", {y}, {"y"}, "relu");
  add_output(b.graph(), "y", DType::float32, s.dims);
  if (s.d_output) add_output(b.graph(), "d", DType::float32, s.dims);
  (void)size;
  return with_ir(b.model(), s.opset >= 15 ? 8 : 7);
}

}  // namespace

TEST_CASE("upgrade --fuse-norms: PyTorch's LayerNormalization decomposition on rank 3, axis -1, becomes one LayerNormalization",
          "[upgrade][fuse]") {
  const int64_t to = GENERATE(17, 18, 21, 23);
  const bool pow = GENERATE(true, false);
  const bool div = GENERATE(true, false);
  INFO("to " << to << " pow " << pow << " div " << div);
  LnSpec s;
  s.pow = pow;
  s.div = div;
  const Model in = layernorm_model(s);
  UpgradeReport r;
  const Model out = fused(in, to, &r);
  CHECK(count_op(out, "LayerNormalization") == 1);
  CHECK(count_op(out, "ReduceMean") == 0);
  CHECK(count_op(out, "Sqrt") == 0);
  CHECK(out.proto.graph().node_size() == 2);  // LayerNormalization, Relu
  const auto& ln = first_node(out, "LayerNormalization");
  CHECK(ln.name() == "/ln/LayerNormalization");
  CHECK(attr_of(ln, "axis")->i() == -1);
  CHECK(attr_of(ln, "epsilon")->f() == 1e-5f);
  CHECK(ln.input_size() == 3);
  CHECK(ln.input(1) == "gamma");
  CHECK(ln.input(2) == "beta");
  CHECK(r.not_fused.empty());
  CHECK_THAT(fused_what(r), Catch::StartsWith(std::string("fused ReduceMean, Sub, ") + (pow ? "Pow" : "Mul") +
                                              ", ReduceMean, Add, Sqrt, " + (div ? "Div" : "Reciprocal, Mul") +
                                              ", Mul, Add into LayerNormalization (axis -1, epsilon 1e-05"));
  CHECK(std::find(r.removed.begin(), r.removed.end(), "eps") != r.removed.end());
  CHECK((std::find(r.removed.begin(), r.removed.end(), "two") != r.removed.end()) == pow);
  expect_same_outputs(in, out);
}

TEST_CASE("upgrade --fuse-norms: LayerNormalization over the last 3 axes of rank 4, with and without Scale and B",
          "[upgrade][fuse]") {
  const bool scale = GENERATE(true, false);
  const bool bias = GENERATE(true, false);
  const bool positive = GENERATE(true, false);
  INFO("scale " << scale << " bias " << bias << " positive axes " << positive);
  LnSpec s;
  s.dims = {2, 3, 4, 5};
  s.axes = positive ? std::vector<int64_t>{1, 2, 3} : std::vector<int64_t>{-3, -2, -1};
  s.scale = scale;
  s.bias = bias;
  s.opset = 13;
  const Model in = layernorm_model(s);
  UpgradeReport r;
  const Model out = fused(in, 18, &r);
  REQUIRE(count_op(out, "LayerNormalization") == 1);
  const auto& ln = first_node(out, "LayerNormalization");
  CHECK(attr_of(ln, "axis")->i() == -3);
  CHECK(ln.input_size() == (bias ? 3 : 2));
  if (!scale) {
    // ones of the normalized shape [3, 4, 5], a new initializer
    bool found = false;
    for (const auto& t : out.proto.graph().initializer()) {
      if (t.name() != ln.input(1)) continue;
      found = true;
      CHECK(std::vector<int64_t>(t.dims().begin(), t.dims().end()) == std::vector<int64_t>{3, 4, 5});
    }
    CHECK(found);
    CHECK_THAT(fused_what(r), Catch::Contains("Scale of ones"));
  }
  expect_same_outputs(in, out);
}

TEST_CASE("upgrade --fuse-norms leaves a LayerNormalization decomposition that is not exact, and says why", "[upgrade][fuse]") {
  LnSpec s;
  std::string why;
  SECTION("a second reader of x - mean") {
    s.d_output = true;
    why = "x - mean 'd' has another reader";
  }
  SECTION("axes that are not the trailing ones") {
    s.axes = {1};
    s.scale = s.bias = false;
    why = "axes [1] are not the trailing axes of a rank-3 value";
  }
  SECTION("an epsilon that is not a constant") {
    s.eps_input = true;
    why = "epsilon 'eps' is not a constant";
  }
  const Model in = layernorm_model(s);
  UpgradeReport r;
  const Model out = fused(in, 17, &r);
  CHECK(count_op(out, "LayerNormalization") == 0);
  CHECK(count_op(out, "ReduceMean") == 2);
  REQUIRE(r.not_fused.size() == 1);
  CHECK(r.not_fused[0].op == "LayerNormalization");
  CHECK(r.not_fused[0].label == "/ln/ReduceMean");
  CHECK(r.not_fused[0].why == why);
  CHECK(count_op(out, "RMSNormalization") == 0);
  expect_same_outputs(in, out);
}

TEST_CASE("upgrade --fuse-norms: a LayerNormalization decomposition of a Reshape's output is a LayerNormalization, not a "
          "GroupNormalization left", "[upgrade][fuse]") {
  LnSpec s;
  s.dims = {2, 4, 6};
  Model in = layernorm_model(s);
  auto* g = in.proto.mutable_graph();
  g->mutable_input(0)->set_name("x0");
  auto* dims = g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(1)->set_dim_value(3);
  dims->mutable_dim(2)->set_dim_value(8);
  Tensor shape = Tensor::from_f64(DType::int64, {3}, {0, 4, -1});
  shape.name = "tokens";
  *g->add_initializer() = to_proto(shape);
  auto* reshape = g->add_node();
  reshape->set_op_type("Reshape");
  reshape->set_name("reshape");
  reshape->add_input("x0");
  reshape->add_input("tokens");
  reshape->add_output("x");
  for (int i = g->node_size() - 1; i > 0; --i) g->mutable_node()->SwapElements(i, i - 1);
  UpgradeReport r;
  const Model out = fused(in, 17, &r);
  CHECK(count_op(out, "LayerNormalization") == 1);
  CHECK(count_op(out, "Reshape") == 1);
  CHECK(r.not_fused.empty());
  expect_same_outputs(in, out);
}

TEST_CASE("upgrade --fuse-norms fuses inside If branches too", "[upgrade][fuse]") {
  const Model ln = layernorm_model(LnSpec{});
  GraphBuilder b(15);
  b.input("x", DType::float32, {2, 3, 8});
  b.initializer("cond", Tensor::from_f64(DType::boolean, {}, {1.0}));  // the then branch runs
  onnx::NodeProto& node = b.node("If", {"cond"}, {"out"}, "if");
  auto* then_branch = node.add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& t = *then_branch->mutable_g();
  t = ln.proto.graph();
  t.set_name("then");
  t.clear_input();
  auto* else_branch = node.add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& e = *else_branch->mutable_g();
  e.set_name("else");
  auto* id = e.add_node();
  id->set_op_type("Identity");
  id->add_input("x");
  id->add_output("y_else");
  add_output(e, "y_else", DType::float32, {2, 3, 8});
  add_output(b.graph(), "out", DType::float32, {2, 3, 8});
  const Model in = with_ir(b.model(), 8);
  UpgradeReport r;
  const Model out = fused(in, 17, &r);
  const onnx::GraphProto& then_out = out.proto.graph().node(0).attribute(0).g();
  int lns = 0;
  for (const auto& n : then_out.node()) lns += n.op_type() == "LayerNormalization";
  CHECK(lns == 1);
  CHECK(then_out.node_size() == 2);
  REQUIRE(!r.rewrites.empty());
  CHECK(r.rewrites.back().graph == "main/if.then_branch");
  expect_same_outputs(in, out);
}

TEST_CASE("without --fuse-norms nothing is fused, below opset 17 --fuse-norms fuses nothing and says so",
          "[upgrade][fuse]") {
  const Model in = layernorm_model(LnSpec{});
  UpgradeReport plain;
  const Model kept = converted(in, 17, false, &plain);
  CHECK(count_op(kept, "LayerNormalization") == 0);
  CHECK(plain.not_fused.empty());
  CHECK(fused_what(plain).empty());

  UpgradeReport r;
  const Model low = fused(in, 16, &r);
  CHECK(count_op(low, "LayerNormalization") == 0);
  CHECK(count_op(low, "ReduceMean") == 2);
  CHECK(why_not(r, "LayerNormalization") == "LayerNormalization exists from opset 17; the target is 16");
  REQUIRE(!r.warnings.empty());
  CHECK_THAT(r.warnings.back(), Catch::Contains("nothing is fused"));
  expect_same_outputs(in, low);
}

TEST_CASE("upgrade --fuse-norms --verify exits 0, prints the fusion and lists it in the JSON", "[cli][upgrade][fuse]") {
  TempDir tmp;
  LnSpec s;
  Model in = layernorm_model(s);
  const auto path = (tmp / "ln.onnx").string();
  save_model(in, path);
  const auto r = run_cli({"upgrade", path, "-o", (tmp / "out.onnx").string(), "--to", "17", "--fuse-norms", "--verify"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("/ln/LayerNormalization (LayerNormalization) fused ReduceMean, Sub, Pow, ReduceMean, "
                                    "Add, Sqrt, Div, Mul, Add into LayerNormalization (axis -1, epsilon 1e-05)"));
  CHECK_THAT(r.out, Catch::Contains("verified"));
  const Model written = load_model(tmp / "out.onnx");
  CHECK(count_op(written, "LayerNormalization") == 1);

  LnSpec miss;
  miss.eps_input = true;
  const auto path2 = (tmp / "miss.onnx").string();
  Model missing = layernorm_model(miss);
  save_model(missing, path2);
  const auto j = run_cli({"upgrade", path2, "-o", (tmp / "out2.onnx").string(), "--to", "17", "--fuse-norms", "--json"});
  INFO(j.out << j.err);
  CHECK(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc["not_fused"].size() == 1);
  CHECK(doc["not_fused"][0]["op"] == "LayerNormalization");
  CHECK(doc["not_fused"][0]["label"] == "/ln/ReduceMean");
  CHECK(doc["not_fused"][0]["why"] == "epsilon 'eps' is not a constant");
  const auto text = run_cli({"upgrade", path2, "-o", (tmp / "out3.onnx").string(), "--to", "17", "--fuse-norms"});
  CHECK_THAT(text.out, Catch::Contains("/ln/ReduceMean not fused into LayerNormalization: epsilon 'eps' is not a constant"));
  const auto plain = run_cli({"upgrade", path2, "-o", (tmp / "out4.onnx").string(), "--to", "17", "--json"});
  CHECK_FALSE(nlohmann::json::parse(plain.out).contains("not_fused"));
}

}  // namespace bnorm::test

namespace bnorm::test {
namespace {

TEST_CASE("upgrade --fuse-norms keeps apart two unnamed If nodes whose branches share a path", "[upgrade][fuse]") {
  // Both then-branches are "main/If.then_branch": the plans were keyed by
  // that path, so one branch's fusion was applied to the other's nodes.
  GraphBuilder b(15);
  b.input("x", DType::float32, {2, 3, 8});
  b.initializer("cond", Tensor::from_f64(DType::boolean, {}, {1.0}));
  for (int k = 0; k < 2; ++k) {
    LnSpec spec;
    spec.pow = k == 0;  // Pow(D, 2) in one, Mul(D, D) in the other: different node counts
    const Model ln = layernorm_model(spec);
    onnx::NodeProto& node = b.node("If", {"cond"}, {"out" + std::to_string(k)});
    node.clear_name();
    auto* then_branch = node.add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& t = *then_branch->mutable_g();
    t = ln.proto.graph();
    t.set_name("then");
    t.clear_input();
    for (auto& init : *t.mutable_initializer()) {  // a large epsilon in the second: a wrong one shows in the numbers
      if (init.name() != "eps" || k == 0) continue;
      init = to_proto(Tensor::from_f64(DType::float32, {}, {0.5}));
      init.set_name("eps");
    }
    auto* else_branch = node.add_attribute();
    else_branch->set_name("else_branch");
    else_branch->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& e = *else_branch->mutable_g();
    e.set_name("else");
    auto* id = e.add_node();
    id->set_op_type("Identity");
    id->add_input("x");
    id->add_output("y_else");
    add_output(e, "y_else", DType::float32, {2, 3, 8});
    add_output(b.graph(), "out" + std::to_string(k), DType::float32, {2, 3, 8});
  }
  const Model in = with_ir(b.model(), 8);
  UpgradeReport r;
  const Model out = fused(in, 17, &r);
  for (int k = 0; k < 2; ++k) {
    const onnx::GraphProto& then_out = out.proto.graph().node(k).attribute(0).g();
    int lns = 0;
    for (const auto& n : then_out.node()) lns += n.op_type() == "LayerNormalization";
    CHECK(lns == 1);
  }
  expect_same_outputs(in, out);
}

}  // namespace
}  // namespace bnorm::test
