// upgrade --fuse-norms (lib/transforms/fuse/rmsnorm.cpp, groupnorm.cpp):
// RMSNormalization and GroupNormalization decompositions, generated here,
// become the op at the target opset (and only where it exists), with the
// same outputs through the evaluator; and the lower -> fuse round trip of
// LayerNormalization, RMSNormalization and GroupNormalization.
#include <catch2/catch.hpp>

#include "model/tensor_proto.h"
#include "support/fuse_support.h"
#include "support/test_graph.h"
#include "support/upgrade_support.h"

namespace bnorm::test {

namespace {

const int kF32 = static_cast<int>(DType::float32);

// An RMSNormalization decomposition (Llama-style when `cast`: X float16).
struct RmsSpec {
  std::vector<int64_t> dims{2, 4, 8};
  bool pow = true, div = true, scale = true, cast = false;
  int64_t opset = 15;
};

Model rmsnorm_model(const RmsSpec& s) {
  GraphBuilder b(s.opset);
  const DType t = s.cast ? DType::float16 : DType::float32;
  b.input("x", t, s.dims);
  std::string x = "x";
  if (s.cast) {
    set_attr(b.node("Cast", {"x"}, {"xf"}, "/rms/Cast"), "to", int64_t{kF32});
    x = "xf";
  }
  if (s.pow) {
    b.initializer("two", f32({}, {2.0}));
    b.node("Pow", {x, "two"}, {"sq"}, "/rms/Pow");
  } else {
    b.node("Mul", {x, x}, {"sq"}, "/rms/Square");
  }
  set_ints(b.node("ReduceMean", {"sq"}, {"ms"}, "/rms/ReduceMean"), "axes", {-1});
  b.initializer("eps", f32({}, {1e-6}));
  b.node("Add", {"ms", "eps"}, {"mse"}, "/rms/Add");
  b.node("Sqrt", {"mse"}, {"rms"}, "/rms/Sqrt");
  if (s.div) {
    b.node("Div", {x, "rms"}, {"n"}, "/rms/Div");
  } else {
    b.node("Reciprocal", {"rms"}, {"inv"}, "/rms/Reciprocal");
    b.node("Mul", {x, "inv"}, {"n"}, "/rms/Mul");
  }
  std::string y = "n";
  if (s.cast) {
    set_attr(b.node("Cast", {"n"}, {"nh"}, "/rms/Cast_1"), "to", int64_t{static_cast<int>(DType::float16)});
    y = "nh";
  }
  if (s.scale) {
    b.initializer("w", random_tensor(t, {s.dims.back()}, 5));
    b.node("Mul", {"w", y}, {"scaled"}, "/rms/Mul_1");
    y = "scaled";
  }
  b.node("Identity", {y}, {"y"}, "out");
  add_output(b.graph(), "y", t, s.dims);
  return with_ir(b.model(), 8);
}

// GroupNormalization as Reshape -> InstanceNormalization -> Reshape -> Mul -> Add.
Model groupnorm_model(const std::vector<double>& scale, int64_t opset = 15) {
  GraphBuilder b(opset);
  const std::vector<int64_t> dims{2, 6, 4, 4};
  b.input("x", DType::float32, dims);
  b.initializer("gshape", i64({3}, {0, 3, -1}));
  b.node("Reshape", {"x", "gshape"}, {"r"}, "/gn/Reshape");
  b.initializer("ones", f32({3}, {1, 1, 1}));
  b.initializer("zeros", f32({3}, {0, 0, 0}));
  set_attr(b.node("InstanceNormalization", {"r", "ones", "zeros"}, {"in"}, "/gn/InstanceNormalization"), "epsilon",
           1e-5f);
  b.node("Shape", {"x"}, {"xshape"}, "/gn/Shape");
  b.node("Reshape", {"in", "xshape"}, {"back"}, "/gn/Reshape_1");
  b.initializer("gamma", f32({6, 1, 1}, scale));
  b.node("Mul", {"back", "gamma"}, {"scaled"}, "/gn/Mul");
  b.initializer("beta", f32({6, 1, 1}, {0.1, -0.2, 0.3, 0.3, -0.5, 0.6}));
  b.node("Add", {"scaled", "beta"}, {"y"}, "/gn/Add");
  add_output(b.graph(), "y", DType::float32, dims);
  return with_ir(b.model(), 8);
}

}  // namespace

TEST_CASE("upgrade --fuse-norms: RMSNormalization decompositions become RMSNormalization at 23, and only there",
          "[upgrade][fuse]") {
  const bool pow = GENERATE(true, false);
  const bool div = GENERATE(true, false);
  const bool scale = GENERATE(true, false);
  INFO("pow " << pow << " div " << div << " scale " << scale);
  RmsSpec s;
  s.pow = pow;
  s.div = div;
  s.scale = scale;
  const Model in = rmsnorm_model(s);
  UpgradeReport r;
  const Model out = fused(in, 23, &r);
  REQUIRE(count_op(out, "RMSNormalization") == 1);
  CHECK(out.proto.graph().node_size() == 2);
  const auto& rms = first_node(out, "RMSNormalization");
  CHECK(attr_of(rms, "axis")->i() == -1);
  CHECK(attr_of(rms, "epsilon")->f() == 1e-6f);
  if (scale) CHECK(rms.input(1) == "w");
  CHECK(count_op(out, "LayerNormalization") == 0);
  expect_same_outputs(in, out);

  UpgradeReport r22;
  const Model at22 = fused(in, 22, &r22);
  CHECK(count_op(at22, "RMSNormalization") == 0);
  CHECK(why_not(r22, "RMSNormalization") == "RMSNormalization exists from opset 23; the target is 22");
}

TEST_CASE("upgrade --fuse-norms: a float16 RMS decomposition computed in float between Casts is fused, without the Casts it "
          "is not", "[upgrade][fuse]") {
  RmsSpec s;
  s.cast = true;
  const Model in = rmsnorm_model(s);
  UpgradeReport r;
  const Model out = fused(in, 23, &r);
  REQUIRE(count_op(out, "RMSNormalization") == 1);
  CHECK(count_op(out, "Cast") == 0);
  CHECK(first_node(out, "RMSNormalization").input(0) == "x");
  CHECK_THAT(fused_what(r), Catch::StartsWith("fused Cast, Pow, ReduceMean, Add, Sqrt, Div, Cast, Mul into "
                                              "RMSNormalization"));
  expect_same_outputs(in, out);

  // float16 throughout: the statistics would be computed in another precision
  Model half = in;
  auto* g = half.proto.mutable_graph();
  for (auto& n : *g->mutable_node())
    for (auto& i : *n.mutable_input())
      if (i == "xf") i = "x";
  for (auto& n : *g->mutable_node())
    for (auto& i : *n.mutable_input())
      if (i == "nh") i = "n";
  for (int i = g->node_size() - 1; i >= 0; --i)
    if (g->node(i).op_type() == "Cast") g->mutable_node()->DeleteSubrange(i, 1);
  for (auto& t : *g->mutable_initializer()) {
    if (t.name() == "two" || t.name() == "eps") {
      const Tensor v = decode_tensor(t);
      Tensor h = Tensor::from_f64(DType::float16, v.dims, v.to_f64());
      h.name = t.name();
      t = to_proto(h);
    }
  }
  UpgradeReport rh;
  const Model outh = fused(half, 23, &rh);
  CHECK(count_op(outh, "RMSNormalization") == 0);
  CHECK(why_not(rh, "RMSNormalization") ==
        "'x' is float16: the statistics are computed in float16, the fused op computes them in float (stash_type 1)");
}

TEST_CASE("upgrade --fuse-norms: Reshape, InstanceNormalization, Reshape, Mul, Add becomes GroupNormalization-21 per channel, "
          "-18 per group when each group's values agree", "[upgrade][fuse]") {
  const std::vector<double> per_channel{1.0, 2.0, 0.5, -1.0, 1.5, 0.25};
  const Model in = groupnorm_model(per_channel);
  UpgradeReport r;
  const Model out = fused(in, 21, &r);
  REQUIRE(count_op(out, "GroupNormalization") == 1);
  CHECK(out.proto.graph().node_size() == 1);
  const auto& gn = first_node(out, "GroupNormalization");
  CHECK(attr_of(gn, "num_groups")->i() == 3);
  CHECK_THAT(fused_what(r), Catch::Equals("fused Reshape, InstanceNormalization, Reshape, Shape, Mul, Add into "
                                          "GroupNormalization (num_groups 3, epsilon 1e-05, scale and bias per channel)"));
  expect_same_outputs(in, out);

  UpgradeReport r18;
  const Model at18 = fused(in, 18, &r18);
  CHECK(count_op(at18, "GroupNormalization") == 0);
  CHECK(count_op(at18, "InstanceNormalization") == 1);
  CHECK(why_not(r18, "GroupNormalization") ==
        "the scale differs within group 0: GroupNormalization-18 (opsets 18 to 20) has one value per group, "
        "per-channel values need opset 21");
  expect_same_outputs(in, at18);

  const Model uniform = groupnorm_model({1.0, 1.0, 0.5, 0.5, 2.0, 2.0});
  // the bias differs within groups too: make it uniform
  Model u = uniform;
  for (auto& t : *u.proto.mutable_graph()->mutable_initializer()) {
    if (t.name() != "beta") continue;
    Tensor b = Tensor::from_f64(DType::float32, {6, 1, 1}, {0.1, 0.1, -0.2, -0.2, 0.3, 0.3});
    b.name = "beta";
    t = to_proto(b);
  }
  UpgradeReport ru;
  const Model gn18 = fused(u, 19, &ru);
  REQUIRE(count_op(gn18, "GroupNormalization") == 1);
  const auto& g18 = first_node(gn18, "GroupNormalization");
  for (const auto& t : gn18.proto.graph().initializer()) {
    if (t.name() == g18.input(1) || t.name() == g18.input(2)) CHECK(t.dims(0) == 3);
  }
  expect_same_outputs(u, gn18);

  UpgradeReport r17;
  const Model at17 = fused(u, 17, &r17);
  CHECK(count_op(at17, "GroupNormalization") == 0);
  CHECK(why_not(r17, "GroupNormalization") == "GroupNormalization exists from opset 18; the target is 17");
}

namespace {

// One normalization op at its own opset, for the lower -> fuse round trip.
Model norm_op_model(const std::string& op, int64_t opset, DType t, const std::vector<int64_t>& dims,
                    const std::vector<std::vector<int64_t>>& params, bool stats = false) {
  GraphBuilder b(opset);
  b.input("x", t, dims);
  std::vector<std::string> in{"x"};
  for (size_t i = 0; i < params.size(); ++i) {
    in.push_back("p" + std::to_string(i));
    b.initializer(in.back(), random_tensor(t, params[i], static_cast<uint32_t>(10 + i)));
  }
  std::vector<std::string> out{"y"};
  if (stats) out = {"y", "mean", "inv_std"};
  onnx::NodeProto& n = b.node(op, in, out, "norm");
  set_attr(n, "epsilon", 1e-3f);
  add_output(b.graph(), "y", t, dims);
  if (stats) {
    std::vector<int64_t> sd = dims;
    sd.back() = 1;
    add_output(b.graph(), "mean", DType::float32, sd);
    add_output(b.graph(), "inv_std", DType::float32, sd);
  }
  return with_ir(b.model(), required_ir_version(opset));
}

}  // namespace

TEST_CASE("upgrade --fuse-norms undoes the lowering: LayerNormalization, RMSNormalization and GroupNormalization go down as "
          "their function bodies and come back as the op", "[upgrade][fuse][lower]") {
  Model in;
  std::string op;
  int64_t below = 0;
  SECTION("LayerNormalization, float") {
    in = norm_op_model("LayerNormalization", 17, DType::float32, {2, 3, 8}, {{8}, {8}});
    op = "LayerNormalization";
    below = 16;
  }
  SECTION("LayerNormalization with Mean and InvStdDev as outputs") {
    in = norm_op_model("LayerNormalization", 17, DType::float32, {2, 3, 8}, {{8}}, true);
    op = "LayerNormalization";
    below = 15;
  }
  SECTION("LayerNormalization, float16 (the Cast frame)") {
    in = norm_op_model("LayerNormalization", 17, DType::float16, {2, 5}, {{5}, {5}});
    op = "LayerNormalization";
    below = 16;
  }
  SECTION("RMSNormalization") {
    in = norm_op_model("RMSNormalization", 23, DType::float32, {2, 3, 8}, {{8}});
    op = "RMSNormalization";
    below = 22;
  }
  SECTION("GroupNormalization-21, per channel") {
    in = norm_op_model("GroupNormalization", 21, DType::float32, {2, 6, 3, 3}, {{6}, {6}});
    set_attr(*in.proto.mutable_graph()->mutable_node(0), "num_groups", int64_t{3});
    op = "GroupNormalization";
    below = 17;
  }
  SECTION("GroupNormalization-18, per group") {
    in = norm_op_model("GroupNormalization", 18, DType::float32, {2, 6, 3, 3}, {{3}, {3}});
    set_attr(*in.proto.mutable_graph()->mutable_node(0), "num_groups", int64_t{3});
    op = "GroupNormalization";
    below = 17;
  }
  const int64_t at = default_opset(in.proto);
  const Model low = converted(in, below);
  REQUIRE(count_op(low, op) == 0);
  UpgradeReport r;
  const Model back = fused(low, at, &r);
  INFO(fused_what(r));
  for (const auto& m : r.not_fused) INFO(m.label << ": " << m.why);
  CHECK(r.not_fused.empty());
  REQUIRE(count_op(back, op) == 1);
  CHECK(count_op(back, "ReduceMean") == 0);
  CHECK(count_op(back, "LayerNormalization") == (op == "LayerNormalization" ? 1 : 0));
  CHECK(first_node(back, op).output_size() == first_node(in, op).output_size());
  expect_same_outputs(in, back);
}

}  // namespace bnorm::test
