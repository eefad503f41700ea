#include "transforms/fold/bn_fold.h"

#include <google/protobuf/util/message_differencer.h>
#include <onnx/checker.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "model/tensor_proto.h"
#include "support/conv_bn_model.h"
#include "support/cli.h"

using namespace bnorm;
using nlohmann::json;

namespace {

const onnx::NodeProto* node_named(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

const onnx::TensorProto* initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

std::vector<double> values(const onnx::GraphProto& g, const std::string& name) {
  const auto* t = initializer(g, name);
  REQUIRE(t);
  return decode_tensor(*t).to_f64();
}

}  // namespace

TEST_CASE("fold folds exactly the nodes the generator marked foldable and leaves the others as they were", "[fold]") {
  const json manifest = json::parse(test::read_file(test::testdata("manifest.json")));
  Model model = load_model(test::testdata("fold_cases_opset13.onnx"));
  const onnx::ModelProto before = model.proto;
  const FoldReport r = fold_batch_norms(model);
  int expected = 0;
  for (const auto& n : manifest["fold_cases_opset13.onnx"]["norm_nodes"]) {
    const std::string name = n["name"];
    INFO(name);
    if (n["foldable"].get<bool>()) {
      ++expected;
      CHECK(node_named(model.proto.graph(), name) == nullptr);
      const auto* producer = node_named(model.proto.graph(), n["producer"].get<std::string>());
      REQUIRE(producer);
      CHECK(producer->output(0) == node_named(before.graph(), name)->output(0));
    } else {
      const auto* kept = node_named(model.proto.graph(), name);
      REQUIRE(kept);
      CHECK(google::protobuf::util::MessageDifferencer::Equals(*kept, *node_named(before.graph(), name)));
    }
  }
  CHECK(static_cast<int>(r.folded.size()) == expected);
  CHECK(r.total == 10);
  CHECK(r.skipped.size() == 4);
  onnx::ModelProto checked = model.proto;
  CHECK_NOTHROW(onnx::checker::check_model(checked));
}

TEST_CASE("a weight shared by two folded Convs becomes one tensor per Conv and the old one goes", "[fold]") {
  Model model = load_model(test::testdata("fold_cases_opset13.onnx"));
  const auto* a = node_named(model.proto.graph(), "conv_shared_weight_a");
  REQUIRE(a);
  const std::string shared = a->input(1);
  fold_batch_norms(model);
  const auto& g = model.proto.graph();
  const std::string wa = node_named(g, "conv_shared_weight_a")->input(1);
  const std::string wb = node_named(g, "conv_shared_weight_b")->input(1);
  CHECK(wa != wb);
  CHECK(wa != shared);
  CHECK(initializer(g, wa));
  CHECK(initializer(g, wb));
  CHECK_FALSE(initializer(g, shared));
}

TEST_CASE("folding an IR 3 model lists new initializers as graph inputs and drops the removed ones", "[fold]") {
  Model model = load_model(test::testdata("demo_opset6.onnx"));
  fold_batch_norms(model);
  const auto& g = model.proto.graph();
  std::set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  for (const auto& t : g.initializer()) CHECK(inputs.count(t.name()) == 1);
  for (const auto& i : g.input()) CHECK((i.name() == "input" || initializer(g, i.name())));
  for (const auto& n : g.node()) CHECK(n.op_type() != "BatchNormalization");
  onnx::ModelProto checked = model.proto;
  CHECK_NOTHROW(onnx::checker::check_model(checked));
}

TEST_CASE("a folded Gemm computes what Gemm then BatchNormalization computed, by a float64 reference", "[fold]") {
  Model model = load_model(test::testdata("fold_cases_opset13.onnx"));
  const onnx::GraphProto before = model.proto.graph();
  const auto* gemm = node_named(before, "gemm_transB");
  const auto* bn = node_named(before, "bn_gemm_transB");
  REQUIRE(gemm);
  REQUIRE(bn);
  const auto B = values(before, gemm->input(1));  // [N, K] (transB = 1)
  const auto C = values(before, gemm->input(2));  // [N]
  const auto s = values(before, bn->input(1)), b = values(before, bn->input(2));
  const auto mean = values(before, bn->input(3)), var = values(before, bn->input(4));
  const size_t N = s.size(), K = B.size() / N;
  fold_batch_norms(model);
  const auto& g = model.proto.graph();
  const auto* folded = node_named(g, "gemm_transB");
  const auto B2 = values(g, folded->input(1)), C2 = values(g, folded->input(2));
  // One row x of ones and ramps: BN(x B^T + C) against x B2^T + C2.
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<double> x(K);
    for (size_t k = 0; k < K; ++k) x[k] = std::sin(1.0 + k + trial);
    for (size_t n = 0; n < N; ++n) {
      double y = C[n], y2 = C2[n];
      for (size_t k = 0; k < K; ++k) {
        y += x[k] * B[n * K + k];
        y2 += x[k] * B2[n * K + k];
      }
      const double want = (y - mean[n]) / std::sqrt(var[n] + 1e-5) * s[n] + b[n];
      CHECK(y2 == Approx(want).epsilon(1e-5).margin(1e-5));
    }
  }
}

TEST_CASE("bnorm fold writes the model, reports, and never touches its input", "[fold][cli]") {
  test::TempDir tmp;
  const auto in = test::testdata("fold_cases_opset13.onnx");
  const std::string original = test::read_file(in);
  const auto r = test::run_cli({"fold", in.string(), "-o", (tmp / "out.onnx").string(), "--json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["folded"].size() == 6);
  CHECK(j["not_folded"].size() == 4);
  CHECK(j["batch_norm_nodes"] == 10);
  CHECK(test::read_file(in) == original);
  CHECK(std::filesystem::exists(tmp / "out.onnx"));
}

TEST_CASE("bnorm fold --verify proves every fold and reports each one", "[fold][cli]") {
  test::TempDir tmp;
  const auto r = test::run_cli({"fold", "--verify", "--json", test::testdata("fold_cases_opset13.onnx").string(), "-o",
                                (tmp / "out.onnx").string()});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["verify"].size() == 6);
  for (const auto& c : j["verify"]) CHECK(c["pass"] == true);
  CHECK(j["written"] == true);
}

TEST_CASE("weights not in memory (deferred, external) are folded while saving, to the same model as in memory", "[fold]") {
  test::TempDir tmp;
  for (const char* name : {"resnet_block_opset9.onnx", "fold_cases_opset13.onnx", "small_cnn_opset6.onnx",
                           "external/model.onnx"}) {
    INFO(name);
    Model in_memory = load_model(test::testdata(name), 0);
    const FoldReport a = fold_batch_norms(in_memory);
    save_model(in_memory, tmp / "a.onnx");

    Model deferred = load_model(test::testdata(name), 1);  // every raw_data stays in the file
    FoldOptions o;
    o.rewrite_on_save = true;
    const FoldReport b = fold_batch_norms(deferred, o);
    CHECK(b.folded.size() == a.folded.size());
    CHECK_FALSE(deferred.rewrites.empty());
    save_model(deferred, tmp / "b.onnx");

    onnx::ModelProto pa, pb;
    REQUIRE(pa.ParseFromString(test::read_file(tmp / "a.onnx")));
    REQUIRE(pb.ParseFromString(test::read_file(tmp / "b.onnx")));
    if (!deferred.has_external_data() && !in_memory.has_external_data()) {
      CHECK(google::protobuf::util::MessageDifferencer::Equals(pa, pb));
      continue;
    }
    // External data: folded in memory, the weights come back inline (and
    // small ones stay so when saved); folded while saving they stay external.
    // Every tensor has the same bytes.
    REQUIRE(pa.graph().initializer_size() == pb.graph().initializer_size());
    for (int i = 0; i < pa.graph().initializer_size(); ++i) {
      INFO(pa.graph().initializer(i).name());
      CHECK(decode_tensor(pa.graph().initializer(i), tmp.path()).bytes == decode_tensor(pb.graph().initializer(i), tmp.path()).bytes);
    }
  }
}

TEST_CASE("a model folded while saving evaluates in memory to the folded numbers before it is saved", "[fold]") {
  // The evaluator decoded initializers without the fold's pending rewrites:
  // the in-memory model ran with the BN removed but the weights unscaled
  // (found by the public API's example: fold, then compare, before saving).
  for (const char* name : {"resnet_block_opset9.onnx", "external/model.onnx"}) {
    INFO(name);
    const Model original = load_model(test::testdata(name));
    Model deferred = load_model(test::testdata(name), 1);  // every raw_data stays in the file
    FoldOptions o;
    o.rewrite_on_save = true;
    REQUIRE_FALSE(fold_batch_norms(deferred, o).folded.empty());
    REQUIRE_FALSE(deferred.rewrites.empty());
    const auto inputs = random_inputs(original, 3, {});
    const auto want = evaluate(original, inputs);
    const auto got = evaluate(deferred, inputs);
    for (const auto& [out, t] : want) {
      const auto a = t.to_f64(), b = got.at(out).to_f64();
      REQUIRE(a.size() == b.size());
      for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-4 * (1 + std::fabs(a[i])));
    }
  }
}

TEST_CASE("a model read with external data is written with external data, even when folding inlined it", "[fold]") {
  test::TempDir tmp;
  Model m = load_model(test::testdata("external/model.onnx"));
  REQUIRE(m.has_external_data());
  REQUIRE_FALSE(fold_batch_norms(m).folded.empty());  // in memory: the folded weights are inline now
  SaveOptions o;
  o.external_threshold = 16;  // the test model's weights are small
  save_model(m, tmp / "out.onnx", o);
  CHECK(std::filesystem::exists(tmp / "out.onnx.data"));
  CHECK(load_model(tmp / "out.onnx").has_external_data());
}

// Found by fuzz_fold (tests/fuzz_regressions/fold/bn-without-outputs-in-subgraph.onnx):
// the plan read output 0 of a BatchNormalization that had none.
TEST_CASE("a BatchNormalization naming no output is not folded, and says why", "[fold]") {
  Model model;
  model.proto = test::conv_bn();
  auto* g = model.proto.mutable_graph();
  g->mutable_node(1)->clear_output();
  g->clear_output();
  const FoldReport r = fold_batch_norms(model);
  CHECK(r.folded.empty());
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].reason == "BN names no output Y");
  CHECK(g->node_size() == 2);
}
