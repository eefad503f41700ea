// ai.onnx.preview.FlexAttention-1 against float64 references computed
// independently with numpy (scores and probabilities rounded to the
// softmax precision, as docs/semantics.md decides), GQA, score_mod and
// prob_mod subgraphs, softmax_precision, and refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Model;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

// Q (1, 2, 2, 2), K and V (1, 1, 3, 2): two query heads share one key/value head.
const V kQ = {1, 0, 0, 1, 1, 1, -1, 2};
const V kK = {1, 2, 0, -1, 3, 1};
const V kV = {1, 0, 0, 1, 2, 2};

// A one-node subgraph (x -> op(x, c) -> y) of element type `t`; `c` is an initializer.
onnx::GraphProto modifier(const std::string& op, DType t, const Tensor& c) {
  onnx::GraphProto g;
  g.set_name(op + "_mod");
  auto* in = g.add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(t));
  auto* n = g.add_node();
  n->set_op_type(op);
  n->add_input("x");
  n->add_input("c");
  n->add_output("y");
  Tensor named = c;
  named.name = "c";
  bnorm::encode_tensor(named, g.add_initializer());
  g.add_output()->set_name("y");
  return g;
}

void set_graph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

using NodeSetup = std::function<void(onnx::NodeProto&)>;

Tensor run_flex(DType t, const NodeSetup& setup = {}, std::vector<int64_t> q_dims = {1, 2, 2, 2}) {
  GraphBuilder b(26);
  b.initializer("q", Tensor::from_f64(t, q_dims, kQ));
  b.initializer("k", Tensor::from_f64(t, {1, 1, 3, 2}, kK));
  b.initializer("v", Tensor::from_f64(t, {1, 1, 3, 2}, kV));
  auto& n = b.node("FlexAttention", {"q", "k", "v"}, {"y"}, "flex");
  n.set_domain("ai.onnx.preview");
  if (setup) setup(n);
  b.output("y");
  Model m = b.model();
  auto* preview = m.proto.add_opset_import();
  preview->set_domain("ai.onnx.preview");
  preview->set_version(1);
  return bnorm::evaluate(m, {}).at("y");
}

}  // namespace

TEST_CASE("FlexAttention: scale 1/sqrt(E), GQA, scores and probabilities rounded to float", "[eval][flexattention]") {
  const Tensor y = run_flex(DType::float32);
  REQUIRE(y.dtype == DType::float32);
  REQUIRE(y.dims == std::vector<int64_t>{1, 2, 2, 2});
  check_close(y.to_f64(), {1.6457322835922241, 1.5553109645843506, 1.2313756942749023, 0.6857101917266846,
                           1.6377935409545898, 1.3330228328704834, 1.0275328159332275, 0.13540533185005188},
              0, 1e-6);
  // softmax_precision double: the scores and probabilities stay in double.
  const Tensor d = run_flex(DType::float32, [](onnx::NodeProto& n) { set_attr(n, "softmax_precision", int64_t{11}); });
  check_close(d.to_f64(), {1.6457324028015137, 1.5553109645843506, 1.2313755750656128, 0.6857101321220398,
                           1.6377934217453003, 1.3330228328704834, 1.0275328159332275, 0.13540531694889069},
              0, 1e-6);
}

TEST_CASE("FlexAttention in double with a scale, and in float16 rounded once at the end", "[eval][flexattention]") {
  const Tensor d = run_flex(DType::float64, [](onnx::NodeProto& n) { set_attr(n, "scale", 0.25f); });
  REQUIRE(d.dtype == DType::float64);
  check_close(d.to_f64(), {1.2538044902355892, 1.1892682995245198, 1.1361223688064048, 0.9017402156607043,
                           1.3454671357462957, 1.1071024157770986, 1.0491872700673641, 0.6179118826829204},
              0, 1e-14);
  const Tensor h = run_flex(DType::float16);
  REQUIRE(h.dtype == DType::float16);
  check_close(h.to_f64(), {1.6455078125, 1.5556640625, 1.2314453125, 0.685546875, 1.6376953125, 1.3330078125,
                           1.02734375, 0.1353759765625},
              0, 1e-3);
}

TEST_CASE("FlexAttention runs score_mod on the float scores and prob_mod on the probabilities",
          "[eval][flexattention]") {
  // score_mod adds [0, -inf, 1] along the keys: the second key is masked out.
  const Tensor bias = Tensor::from_f64(DType::float32, {3}, {0, -std::numeric_limits<double>::infinity(), 1});
  const Tensor s = run_flex(DType::float32, [&](onnx::NodeProto& n) {
    set_graph(n, "score_mod", modifier("Add", DType::float32, bias));
  });
  check_close(s.to_f64(), {1.9179047346115112, 1.8358094692230225, 1.5727043151855469, 1.1454086303710938,
                           1.8464605808258057, 1.6929212808609009, 1.1384258270263672, 0.2768515348434448},
              0, 1e-6);
  // prob_mod halves the probabilities; float16 inputs still give the subgraph float.
  const Tensor half = Tensor::from_f64(DType::float32, {}, {0.5});
  const Tensor p = run_flex(DType::float32, [&](onnx::NodeProto& n) {
    set_graph(n, "prob_mod", modifier("Mul", DType::float32, half));
  });
  check_close(p.to_f64(), {0.8228661417961121, 0.7776554822921753, 0.6156878471374512, 0.3428550958633423,
                           0.8188967704772949, 0.6665114164352417, 0.5137664079666138, 0.06770266592502594},
              0, 1e-6);
  const Tensor h = run_flex(DType::float16, [&](onnx::NodeProto& n) {
    set_graph(n, "prob_mod", modifier("Mul", DType::float32, half));
  });
  CHECK(h.dtype == DType::float16);
  check_close(h.to_f64(), {0.8228661417961121, 0.7776554822921753, 0.6156878471374512, 0.3428550958633423,
                           0.8188967704772949, 0.6665114164352417, 0.5137664079666138, 0.06770266592502594},
              0, 2e-3);
}

TEST_CASE("FlexAttention refuses bad ranks, head counts, types and modifiers", "[eval][flexattention]") {
  CHECK_THROWS_AS(run_flex(DType::float32, {}, {1, 2, 4}), bnorm::Error);  // rank 3
  CHECK_THROWS_AS(run_flex(DType::int32), bnorm::Error);
  // A score_mod that changes the type (float -> double) or the shape.
  onnx::GraphProto to_double = modifier("Add", DType::float32, Tensor::from_f64(DType::float32, {}, {0}));
  auto* cast = to_double.add_node();
  cast->set_op_type("Cast");
  cast->add_input("y");
  cast->add_output("y64");
  set_attr(*cast, "to", int64_t{11});
  to_double.mutable_output(0)->set_name("y64");
  try {
    run_flex(DType::float32, [&](onnx::NodeProto& n) { set_graph(n, "score_mod", to_double); });
    FAIL("a score_mod returning double ran");
  } catch (const bnorm::Error& e) {
    CHECK_THAT(e.message(), Catch::Contains("must keep its input's float"));
  }
  const Tensor wide = Tensor::from_f64(DType::float32, {2, 1, 1, 1, 1}, {1, 2});
  CHECK_THROWS_AS(run_flex(DType::float32, [&](onnx::NodeProto& n) {
                    set_graph(n, "prob_mod", modifier("Add", DType::float32, wide));
                  }),
                  bnorm::Error);
  CHECK_THROWS_AS(run_flex(DType::float32, [](onnx::NodeProto& n) { set_attr(n, "softmax_precision", int64_t{7}); }),
                  bnorm::Error);
}
