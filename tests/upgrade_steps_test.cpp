// bnorm upgrade, node by node: every BatchNormalization/InstanceNormalization
// step in both directions on generated one-node models of several types and
// ranks, checked by ONNX's checker and by the numbers before and after.
#include <catch2/catch.hpp>

#include <optional>

#include "core/error.h"
#include "eval/report/compare.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "support/test_graph.h"
#include "transforms/upgrade/upgrade.h"
#include "transforms/upgrade/plan.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

struct BnSpec {
  int64_t opset = 9;
  DType type = DType::float32;
  int rank = 4;
  int outputs = 1;
  std::optional<int64_t> is_test, spatial, training_mode;
  bool params_as_inputs = false;
  std::vector<std::string> exposed = {"y"};  // graph outputs
};

Tensor param(DType t, const std::vector<int64_t>& dims, double lo, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(checked_numel(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = lo + static_cast<double>((i * 37 + seed * 11) % 17) / 16.0;
  return Tensor::from_f64(t, dims, v);
}

Model bn_model(const BnSpec& s) {
  test::GraphBuilder b(s.opset);
  auto& m = const_cast<Model&>(b.model());
  m.proto.set_ir_version(std::max<int64_t>(4, required_ir_version(s.opset)));
  m.proto.mutable_graph()->set_name("bn_graph");
  const std::vector<int64_t> all{2, 3, 4, 5, 2};
  const std::vector<int64_t> x_dims(all.begin(), all.begin() + s.rank);
  std::vector<int64_t> p_dims{3};
  if (s.spatial == 0) p_dims.assign(x_dims.begin() + 1, x_dims.end());
  b.input("x", s.type, x_dims);
  const char* names[] = {"scale", "bias", "mean", "var"};
  const double lows[] = {0.5, -0.5, -0.5, 0.5};
  for (int i = 0; i < 4; ++i) {
    if (s.params_as_inputs) b.input(names[i], s.type, p_dims);
    else b.initializer(names[i], param(s.type, p_dims, lows[i], i));
  }
  const std::vector<std::string> outs{"y", "mean_out", "var_out", "saved_mean", "saved_var"};
  auto& n = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
                   {outs.begin(), outs.begin() + s.outputs}, "bn");
  if (s.opset < 6) {
    auto* a = n.add_attribute();
    a->set_name("consumed_inputs");
    a->set_type(onnx::AttributeProto::INTS);
    for (int v : {0, 0, 0, 1, 1}) a->add_ints(v);
  }
  if (s.is_test) test::set_attr(n, "is_test", *s.is_test);
  if (s.spatial) test::set_attr(n, "spatial", *s.spatial);
  if (s.training_mode) test::set_attr(n, "training_mode", *s.training_mode);
  for (const auto& o : s.exposed) add_output(b.graph(), o, s.type, o == "y" ? x_dims : p_dims);
  return b.model();
}

const onnx::NodeProto& only_bn(const Model& m) {
  const onnx::NodeProto* found = nullptr;
  for (const auto& n : m.proto.graph().node()) {
    if (n.op_type() == "BatchNormalization") found = &n;
  }
  REQUIRE(found);
  return *found;
}

}  // namespace

TEST_CASE("an inference BatchNormalization keeps its numbers between any two versions", "[upgrade]") {
  const int64_t from = GENERATE(1, 6, 7, 9, 14, 15);
  const int64_t to = GENERATE(1, 6, 7, 9, 14, 15);
  const DType type = GENERATE(DType::float32, DType::float64, DType::float16);
  const int rank = GENERATE(2, 3, 4);
  BnSpec s;
  s.opset = from;
  s.type = type;
  s.rank = rank;
  if (from < 7) s.is_test = 1;
  INFO("opset " << from << " -> " << to << ", " << dtype_name(type) << ", rank " << rank);
  const Model in = bn_model(s);
  const Model out = converted(in, to);
  expect_same_outputs(in, out);
  const onnx::NodeProto& bn = only_bn(out);
  CHECK(bn.output_size() == 1);
  CHECK(has_attr(bn, "consumed_inputs") == (to < 6));
  CHECK(has_attr(bn, "is_test") == (to < 7));
  CHECK_FALSE(has_attr(bn, "training_mode"));
}

TEST_CASE("bfloat16 nodes move between 14 and 15, compute in float between Casts below 14, and are refused there with --no-casts", "[upgrade]") {
  BnSpec s;
  s.opset = GENERATE(14, 15);
  s.type = DType::bfloat16;
  const Model in = bn_model(s);
  expect_same_outputs(in, converted(in, s.opset == 14 ? 15 : 14));
  expect_same_outputs(in, converted(in, 13));  // upgrade_bf16_casts_test.cpp: the Casts, bit for bit
  Model m = in;
  UpgradeOptions o;
  o.target = 13;
  o.casts = false;
  try {
    upgrade_model(m, o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    CHECK(e.message().find("bfloat16") != std::string::npos);
    CHECK(e.node() == "bn");
  }
}

TEST_CASE("a training BatchNormalization stays training at every target, with a warning", "[upgrade]") {
  const int64_t from = GENERATE(1, 6, 9, 14);
  const int64_t to = GENERATE(1, 6, 7, 9, 14, 15);
  BnSpec s;
  s.opset = from;
  s.rank = GENERATE(2, 4);
  if (from < 7) s.is_test = 0;
  if (from >= 7) s.outputs = from >= 14 ? 3 : 5;
  if (from >= 14) s.training_mode = 1;
  INFO("opset " << from << " -> " << to);
  const Model in = bn_model(s);
  UpgradeReport r;
  const Model out = converted(in, to, false, &r);
  expect_same_outputs(in, out);
  const onnx::NodeProto& bn = only_bn(out);
  if (to >= 14) {
    CHECK(has_attr(bn, "training_mode"));
    CHECK(bn.output_size() == 3);
  } else if (to >= 7) {
    CHECK(bn.output_size() == 5);
  }
  REQUIRE(r.nodes.size() == 1);
  if (r.nodes[0].from != r.nodes[0].to) {
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("node 'bn'") != std::string::npos);
    CHECK(r.warnings[0].find("--inference") != std::string::npos);
  }
}

TEST_CASE("upgrade --inference turns training nodes into inference nodes and lists them", "[upgrade]") {
  BnSpec s;
  s.opset = 6;  // is_test absent: training
  const Model in = bn_model(s);
  UpgradeReport r;
  const Model out = converted(in, 15, true, &r);
  CHECK(r.made_inference == std::vector<std::string>{"bn"});
  CHECK(r.warnings.empty());
  CHECK_FALSE(has_attr(only_bn(out), "training_mode"));
  BnSpec inference = s;
  inference.is_test = 1;
  expect_same_outputs(bn_model(inference), out);
}

TEST_CASE("spatial = 0 is rewritten with the same numbers, constant or not, inference or training", "[upgrade]") {
  BnSpec s;
  s.opset = GENERATE(1, 6, 7);
  s.spatial = 0;
  s.rank = GENERATE(3, 4, 5);
  s.params_as_inputs = GENERATE(false, true);
  const bool training = GENERATE(false, true);
  if (s.opset < 7) s.is_test = training ? 0 : 1;
  if (s.opset == 7 && training) s.outputs = 5;
  if (training) s.exposed = {"y", "mean_out"};
  if (training && s.opset < 7) s.outputs = 2;
  const int64_t to = GENERATE(9, 14, 15);
  INFO("opset " << s.opset << " rank " << s.rank << " params_as_inputs " << s.params_as_inputs << " training "
                << training << " -> " << to);
  const Model in = bn_model(s);
  UpgradeReport r;
  const Model out = converted(in, to, false, &r);
  expect_same_outputs(in, out);
  CHECK(count_op(out, "Flatten") == 1);
  CHECK_FALSE(has_attr(only_bn(out), "spatial"));
  // Constant parameters are replaced by flattened copies; the originals go.
  const size_t params = s.params_as_inputs ? 0 : 4;
  CHECK(r.removed.size() == params);
  for (const auto& t : out.proto.graph().initializer()) {
    for (const char* p : {"scale", "bias", "mean", "var"}) CHECK(t.name() != p);
  }
}

TEST_CASE("spatial = 1 is dropped, and spatial = 0 on rank 2 needs no rewrite", "[upgrade]") {
  BnSpec s;
  s.opset = 7;
  s.spatial = GENERATE(0, 1);
  s.rank = s.spatial == 0 ? 2 : 4;
  const Model out = converted(bn_model(s), 9);
  CHECK(count_op(out, "Flatten") == 0);
  CHECK_FALSE(has_attr(only_bn(out), "spatial"));
  expect_same_outputs(bn_model(s), out);
}

TEST_CASE("used saved_mean and saved_var are computed by added nodes at 14+", "[upgrade]") {
  BnSpec s;
  s.opset = 9;
  s.outputs = 5;
  s.rank = GENERATE(2, 3, 4);
  s.exposed = {"y", "mean_out", "saved_mean", "saved_var"};
  const Model in = bn_model(s);
  const Model out = converted(in, 15);
  expect_same_outputs(in, out);
  CHECK(only_bn(out).output_size() == 3);
  CHECK(count_op(out, "ReduceMean") == 3);
}

TEST_CASE("a used saved_var of an input of unknown rank is refused, naming the node and the output", "[upgrade]") {
  BnSpec s;
  s.opset = 9;
  s.outputs = 5;
  s.exposed = {"y", "saved_var"};
  Model in = bn_model(s);
  in.proto.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  UpgradeOptions o;
  try {
    upgrade_model(in, o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.node() == "bn");
    CHECK(e.message().find("saved_var") != std::string::npos);
    CHECK(e.exit_code() == 2);
  }
}

TEST_CASE("two to four outputs at 7..13 are read as training, with a warning", "[upgrade]") {
  BnSpec s;
  s.opset = 9;
  s.outputs = 3;
  const Model in = bn_model(s);
  UpgradeReport r;
  const Model out = converted(in, 15, false, &r);
  CHECK(has_attr(only_bn(out), "training_mode"));
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].find("not a valid count") != std::string::npos);
  expect_same_outputs(in, out);
}

TEST_CASE("round trips 1 -> 15 -> 1 and 15 -> 6 -> 15 keep the numbers", "[upgrade]") {
  BnSpec s;
  s.opset = 1;
  s.is_test = GENERATE(0, 1);
  const Model legacy = bn_model(s);
  const Model back = converted(converted(legacy, 15), 1);
  expect_same_outputs(legacy, back);
  CHECK(has_attr(only_bn(back), "consumed_inputs"));

  BnSpec n;
  n.opset = 15;
  n.type = GENERATE(DType::float32, DType::float16);
  const Model modern = bn_model(n);
  expect_same_outputs(modern, converted(converted(modern, 6), 15));
}
