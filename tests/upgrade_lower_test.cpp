// bnorm upgrade down to an opset where an op does not exist yet: Gelu-20,
// LayerNormalization-17, RMSNormalization-23, GroupNormalization-18/21 and
// MeanVarianceNormalization-9/13 are lowered to the ops of their function
// bodies (transforms/upgrade/lower_pass.cpp, steps/lower_*.cpp). Each converted model is
// compared with the original through the evaluator on seeded inputs
// (through(), which also runs ONNX's checker at <= 17 and bnorm's
// structural check); refusals are checked by their message. The
// experimental ops and ConstantOfShape: upgrade_lower_experimental_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>

#include "eval/backend/folders.h"
#include "support/test_graph.h"
#include "model/model_walk.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/preflight.h"
#include "support/cli.h"
#include "support/upgrade_support.h"
#include "support/lower_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

Model layernorm(DType t, const std::vector<int64_t>& dims, int64_t axis, bool bias, bool stats = false) {
  Model m = net(17);
  input(m, "x", t, dims);
  const int64_t r = static_cast<int64_t>(dims.size());
  const std::vector<int64_t> normalized(dims.begin() + (axis < 0 ? axis + r : axis), dims.end());
  constant(m, "scale", t, normalized, 1.5);
  std::vector<std::string> in{"x", "scale"};
  if (bias) {
    constant(m, "bias", t, normalized, -0.5);
    in.push_back("bias");
  }
  std::vector<std::string> out{"y"};
  if (stats) out = {"y", "mean", "inv_std"};
  auto& n = node(m, "LayerNormalization", in, out, "ln");
  set_attr(n, "axis", axis);
  set_attr(n, "epsilon", 1e-3f);
  add_output(g(m), "y", t, dims);
  if (stats) {
    std::vector<int64_t> sd = dims;
    for (int64_t i = (axis < 0 ? axis + r : axis); i < r; ++i) sd[static_cast<size_t>(i)] = 1;
    add_output(g(m), "mean", DType::float32, sd);
    add_output(g(m), "inv_std", DType::float32, sd);
  }
  return m;
}

}  // namespace

TEST_CASE("LayerNormalization-17 below 17 becomes its function body, same numbers at 16 down to 7", "[upgrade][lower]") {
  struct Case {
    DType t;
    std::vector<int64_t> dims;
    int64_t axis;
    bool bias;
  };
  const Case cases[] = {
      {DType::float32, {2, 3, 4}, -1, true},    {DType::float32, {2, 3, 4}, 1, false},
      {DType::float32, {2, 3, 4, 5}, 1, true},  {DType::float32, {2, 3, 4, 5}, -2, true},
      {DType::float16, {2, 3, 4}, -1, true},    {DType::float16, {2, 3, 4, 5}, 2, false},
  };
  for (const auto& c : cases) {
    INFO("type " << dtype_name(c.t) << " rank " << c.dims.size() << " axis " << c.axis << " bias " << c.bias);
    const Model m = layernorm(c.t, c.dims, c.axis, c.bias);
    for (const int64_t to : {16, 13, 11, 9, 7}) {
      const Model low = through(m, {to});
      CHECK_FALSE(has_op(low, "LayerNormalization"));
      CHECK(count_op(low, "ReduceMean") == 2);
      // float16 with stash_type 1: the statistics in float, cast back before Scale.
      CHECK(count_op(low, "Cast") == (c.t == DType::float16 ? 2 : 0));
    }
  }
}

TEST_CASE("Lowered LayerNormalization reports its ops and keeps Mean and InvStdDev as outputs", "[upgrade][lower]") {
  const Model m = layernorm(DType::float16, {2, 3, 4}, 1, true, true);
  UpgradeReport r;
  const Model low = converted(m, 13, false, &r);
  expect_same_outputs(m, low);
  CHECK(rewrite_of(r, "ln") == "lowered to Cast, ReduceMean, Sub, Mul, Add, Sqrt, Reciprocal");
  // Mean and InvStdDev keep their names, the stash type (float) and the spec's shape [2, 1, 1].
  bool mean_made = false;
  for (const auto& n : low.proto.graph().node()) mean_made = mean_made || (n.op_type() == "ReduceMean" && n.output(0) == "mean");
  CHECK(mean_made);
  CHECK(first_node(low, "Reciprocal").output(0) == "inv_std");
  // A Mean output nothing reads is still that value.
  Model unused = layernorm(DType::float32, {2, 3, 4}, -1, false, true);
  g(unused).mutable_output()->DeleteSubrange(1, 2);
  const Model low2 = through(unused, {16});
  CHECK(first_node(low2, "Reciprocal").output(0) == "inv_std");
}

TEST_CASE("RMSNormalization-23 below 23 becomes its function body, above and below 17", "[upgrade][lower]") {
  for (const DType t : {DType::float32, DType::float16}) {
    for (const int64_t axis : {int64_t{-1}, int64_t{1}}) {
      INFO("type " << dtype_name(t) << " axis " << axis);
      Model m = net(23);
      input(m, "x", t, {2, 3, 4});
      constant(m, "scale", t, axis < 0 ? std::vector<int64_t>{4} : std::vector<int64_t>{3, 4}, 0.75);
      auto& n = node(m, "RMSNormalization", {"x", "scale"}, {"y"}, "rms");
      set_attr(n, "axis", axis);
      add_output(g(m), "y", t, {2, 3, 4});
      for (const int64_t to : {22, 18, 17, 13}) {
        const Model low = through(m, {to});
        CHECK_FALSE(has_op(low, "RMSNormalization"));
        CHECK(count_op(low, "Div") == 1);
      }
    }
  }
}

TEST_CASE("RMSNormalization with scale of another type than X casts Normalized to scale's type", "[upgrade][lower]") {
  Model m = net(23);
  input(m, "x", DType::float16, {2, 3, 4});
  constant(m, "scale", DType::float32, {4}, 0.75);
  node(m, "RMSNormalization", {"x", "scale"}, {"y"}, "rms");
  add_output(g(m), "y", DType::float32, {2, 3, 4});
  const Model low = through(m, {17});
  CHECK(count_op(low, "Cast") == 1);  // X to float; float is scale's type already
}

TEST_CASE("GroupNormalization-18 and -21 below 18 become the function body, per group and per channel",
          "[upgrade][lower]") {
  SECTION("18: scale and bias per group, constant or not") {
    for (const bool constant_scale : {true, false}) {
      INFO("constant scale " << constant_scale);
      Model m = net(18);
      input(m, "x", DType::float32, {2, 6, 3, 2});
      if (constant_scale) constant(m, "scale", DType::float32, {3}, 1.25);
      else input(m, "scale", DType::float32, {3});
      constant(m, "bias", DType::float32, {3}, 0.5);
      auto& n = node(m, "GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn");
      set_attr(n, "num_groups", int64_t{3});
      set_attr(n, "epsilon", 1e-2f);
      add_output(g(m), "y", DType::float32, {2, 6, 3, 2});
      for (const int64_t to : {17, 13, 9, 7}) {
        UpgradeReport r;
        const Model low = converted(m, to, false, &r);
        expect_same_outputs(m, low);
        CHECK_FALSE(has_op(low, "GroupNormalization"));
        CHECK(std::count(r.removed.begin(), r.removed.end(), "bias") == 1);  // read only as its [3, 1] copy
      }
    }
  }
  SECTION("21: scale and bias per channel, non-uniform within groups; float16 with stash_type 1") {
    for (const DType t : {DType::float32, DType::float16}) {
      for (const auto& dims : {std::vector<int64_t>{2, 4, 3}, std::vector<int64_t>{2, 4, 3, 2}, std::vector<int64_t>{3, 4}}) {
        INFO("type " << dtype_name(t) << " rank " << dims.size());
        Model m = net(21);
        input(m, "x", t, dims);
        constant(m, "scale", t, {4}, 1.25);
        input(m, "bias", t, {4});
        auto& n = node(m, "GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn");
        set_attr(n, "num_groups", int64_t{2});
        add_output(g(m), "y", t, dims);
        for (const int64_t to : {17, 13, 7}) {
          const Model low = through(m, {to});
          CHECK_FALSE(has_op(low, "GroupNormalization"));
          CHECK(count_op(low, "Cast") == (t == DType::float16 ? 2 : 0));
        }
      }
    }
  }
}

TEST_CASE("MeanVarianceNormalization-9/13 below 9 becomes its function body, default and custom axes",
          "[upgrade][lower]") {
  for (const int64_t opset : {9, 13}) {
    for (const auto& axes : {std::vector<int64_t>{}, std::vector<int64_t>{1}, std::vector<int64_t>{0, -1}}) {
      INFO("opset " << opset << " axes " << axes.size());
      Model m = net(opset);
      input(m, "x", DType::float32, {2, 3, 4, 2});
      auto& n = node(m, "MeanVarianceNormalization", {"x"}, {"y"}, "mvn");
      if (!axes.empty()) set_ints(n, "axes", axes);
      add_output(g(m), "y", DType::float32, {2, 3, 4, 2});
      for (const int64_t to : {8, 7}) {
        const Model low = through(m, {to});
        CHECK_FALSE(has_op(low, "MeanVarianceNormalization"));
        // ReduceMean-1 has no negative axes: -1 written as 3.
        const auto* a = attr_of(first_node(low, "ReduceMean"), "axes");
        REQUIRE(a != nullptr);
        for (int64_t x : a->ints()) CHECK(x >= 0);
        if (axes.size() == 2) CHECK(a->ints(1) == 3);
      }
    }
  }
}

TEST_CASE("Gelu-20 below 20 becomes its function body, without approximation it needs Erf (opset 9)",
          "[upgrade][lower]") {
  for (const std::string approximate : {"none", "tanh"}) {
    INFO(approximate);
    Model m = net(20);
    input(m, "x", DType::float32, {2, 3});
    auto& n = node(m, "Gelu", {"x"}, {"y"}, "gelu");
    if (approximate == "tanh") set_string(n, "approximate", "tanh");
    add_output(g(m), "y", DType::float32, {2, 3});
    for (const int64_t to : {19, 13, 9}) {
      const Model low = through(m, {to});
      CHECK_FALSE(has_op(low, "Gelu"));
      CHECK(has_op(low, approximate == "none" ? "Erf" : "Tanh"));
    }
    if (approximate == "tanh") {
      through(m, {7});
    } else {
      const std::string e = upgrade_error_of(m, 8);
      CHECK_THAT(e, Catch::Contains("'gelu'") && Catch::Contains("Erf") && Catch::Contains("before opset 9"));
    }
  }
}

TEST_CASE("Lowering refuses, naming the node: opsets before 7, unknown ranks and types", "[upgrade][lower]") {
  const Model ln = layernorm(DType::float32, {2, 3, 4}, -1, true);
  CHECK_THAT(upgrade_error_of(ln, 6), Catch::Contains("'ln'") && Catch::Contains("broadcasting") &&
                                          Catch::Contains("before 7"));
  // X without a shape: axis 1 needs the rank; axis -1 does not from opset 11, but does below.
  Model no_rank = net(17);
  auto* x = g(no_rank).add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DType::float32));
  constant(no_rank, "scale", DType::float32, {4}, 1.0);
  auto& n = node(no_rank, "LayerNormalization", {"x", "scale"}, {"y"}, "ln");
  add_output(g(no_rank), "y", DType::float32, {});
  CHECK(upgrade_error_of(no_rank, 13).empty());
  CHECK_THAT(upgrade_error_of(no_rank, 10), Catch::Contains("'ln'") && Catch::Contains("rank"));
  set_attr(n, "axis", int64_t{1});
  CHECK_THAT(upgrade_error_of(no_rank, 13), Catch::Contains("'ln'") && Catch::Contains("rank of input 'x' is unknown"));
  // Two nodes that cannot be lowered: one message listing both.
  Model two = net(20);
  input(two, "x", DType::float32, {2, 3});
  node(two, "Gelu", {"x"}, {"a"}, "g1");
  node(two, "Gelu", {"a"}, {"b"}, "g2");
  add_output(g(two), "b", DType::float32, {2, 3});
  const std::string e = upgrade_error_of(two, 8);
  CHECK_THAT(e, Catch::Contains("2 nodes cannot be converted to opset 8") && Catch::Contains("'g1'") &&
                    Catch::Contains("'g2'"));
}

TEST_CASE("Lowering reaches nodes in subgraphs", "[upgrade][lower]") {
  Model m = net(17);
  input(m, "x", DType::float32, {2, 4});
  input(m, "c", DType::boolean, {});
  g(m).mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape();  // a scalar
  constant(m, "scale", DType::float32, {4}, 1.0);
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  auto* ln = then_g.add_node();
  ln->set_op_type("LayerNormalization");
  ln->set_name("inner_ln");
  ln->add_input("x");
  ln->add_input("scale");
  ln->add_output("t");
  add_output(then_g, "t", DType::float32, {2, 4});
  else_g.set_name("else");
  auto* id = else_g.add_node();
  id->set_op_type("Identity");
  id->set_name("id");
  id->add_input("x");
  id->add_output("e");
  add_output(else_g, "e", DType::float32, {2, 4});
  auto& f = node(m, "If", {"c"}, {"y"}, "if");
  auto* a = f.add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = then_g;
  a = f.add_attribute();
  a->set_name("else_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = else_g;
  add_output(g(m), "y", DType::float32, {2, 4});
  const Model low = through(m, {13});
  CHECK_FALSE(has_op(low, "LayerNormalization"));
  CHECK(has_op(low, "Reciprocal"));
}

TEST_CASE("inspect --to plans the lowering instead of a blocker", "[upgrade][lower]") {
  const Model ln = layernorm(DType::float32, {2, 3, 4}, -1, true);
  const UpgradePlan p = plan_upgrade_model(ln, 16);
  CHECK(p.blockers.empty());
  bool listed = false;
  for (const auto& n : p.nodes) {
    if (n.op != "LayerNormalization") continue;
    listed = true;
    CHECK(n.by == "bnorm");
    CHECK(n.to == 0);
    REQUIRE(n.changes.size() == 1);
    CHECK(n.changes[0] == "lowered to ReduceMean, Sub, Mul, Add, Sqrt, Reciprocal");
  }
  CHECK(listed);
  Model gelu = net(20);
  input(gelu, "x", DType::float32, {2, 3});
  node(gelu, "Gelu", {"x"}, {"y"}, "gelu");
  add_output(g(gelu), "y", DType::float32, {2, 3});
  const UpgradePlan q = plan_upgrade_model(gelu, 8);
  REQUIRE(q.blockers.size() == 1);
  CHECK_THAT(q.blockers[0], Catch::Contains("'gelu' (Gelu-20)") && Catch::Contains("Erf"));
}

TEST_CASE("Lowered conformance models of ONNX 1.23 still give ONNX's expected outputs", "[upgrade][lower][conformance]") {
  // The oracle here is ONNX's own output data, not bnorm's evaluator of the op.
  const std::pair<const char*, int64_t> families[] = {{"test_layer_normalization_", 13}, {"test_rms_normalization_", 13},
                                                      {"test_group_normalization_", 13}, {"test_gelu_", 13},
                                                      {"test_mvn", 8}};
  TempDir tmp;
  int ran = 0;
  for (const auto& dir : find_backend_tests(testdata("onnx-node-1.23"))) {
    const std::string name = dir.filename().string();
    if (name.find("expanded") != std::string::npos) continue;
    for (const auto& family : families) {
      if (name.rfind(family.first, 0) != 0) continue;
      INFO(name << " to opset " << family.second);
      Model m = load_model(dir / "model.onnx");
      UpgradeOptions o;
      o.target = family.second;
      const UpgradeReport r = upgrade_model(m, o);
      REQUIRE_FALSE(r.rewrites.empty());  // the lowering first, then the moves of its nodes
      CHECK(r.rewrites[0].what.rfind("lowered to ", 0) == 0);
      const std::filesystem::path out = tmp / name;
      std::filesystem::create_directories(out);
      save_model(m, out / "model.onnx");
      for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.is_directory()) std::filesystem::copy(e.path(), out / e.path().filename());
      }
      const BackendTestResult t = run_backend_test(out, {1e-3, 1e-7});
      INFO(t.skip_reason << t.error);
      CHECK_FALSE(t.skipped);
      CHECK(t.pass());
      ++ran;
    }
  }
  CHECK(ran >= 40);
}
