// bnorm fold --norms all: the norm family's affine folded into its consumer,
// reported in text and JSON, proved by --verify; without --norms only
// BatchNormalization folds.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "eval/run/evaluator.h"
#include "support/test_graph.h"
#include "model/tensor_file.h"
#include "model/tensor_proto.h"
#include "support/cli.h"
#include "transforms/fold/norm_affine.h"

using namespace bnorm;
using namespace bnorm::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Tensor f32(const std::vector<int64_t>& dims, double first) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + 0.25 * static_cast<double>(i % 7) - 0.5;
  return Tensor::from_f64(DType::float32, dims, v);
}

// x [2, 8] -> LayerNormalization 'ln' -> Gemm 'fc' (transB 1, C) -> h
//   -> Relu -> LayerNormalization (unnamed) -> Relu -> z (kept: not read by Gemm/MatMul).
fs::path save_model_file(const TempDir& tmp) {
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 8});
  g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln");
  set_attr(g.node("Gemm", {"y", "W", "C"}, {"h"}, "fc"), "transB", int64_t{1});
  g.node("Relu", {"h"}, {"r"}, "relu1");
  g.node("LayerNormalization", {"r", "s2"}, {"y2"}, "").set_name("");
  g.node("Relu", {"y2"}, {"z"}, "relu2");
  g.initializer("s", f32({8}, 1.0));
  g.initializer("b", f32({8}, 0.1));
  g.initializer("W", f32({4, 8}, -0.3));
  g.initializer("C", f32({4}, 0.2));
  g.initializer("s2", f32({4}, 0.7));
  g.output("z");
  Model m = g.model();
  std::string bytes;
  REQUIRE(m.proto.SerializeToString(&bytes));
  write_file(tmp / "ln.onnx", bytes);
  return tmp / "ln.onnx";
}

}  // namespace

TEST_CASE("fold --norms all folds a LayerNormalization into its Gemm, keeps the other, and --verify proves it",
          "[fold][cli][norm_fold]") {
  TempDir tmp;
  const fs::path in = save_model_file(tmp);
  const auto r = run_cli({"fold", in.string(), "-o", (tmp / "out.onnx").string(), "--norms", "all", "--verify"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("folded 0 of 0 BatchNormalization nodes"));
  CHECK_THAT(r.out, Catch::Contains(
                        "folded the affine of 1 of 2 LayerNormalization, RMSNormalization and GroupNormalization nodes"));
  CHECK_THAT(r.out, Catch::Contains("  folded   LayerNormalization 'ln' into Gemm 'fc'\n"));
  CHECK_THAT(r.out, Catch::Contains("  kept     LayerNormalization #3 -> 'y2': output 'y2' is read by Relu, not Gemm or "
                                    "MatMul\n"));
  CHECK_THAT(r.out, Catch::Contains("  verified   ln into 'fc' on X float [2, 8]"));
  CHECK(fs::exists(tmp / "out.onnx"));

  // The folded model computes what the input did.
  const auto cmp = run_cli({"eval", in.string(), "--compare", (tmp / "out.onnx").string(), "--random", "3"});
  INFO(cmp.out << cmp.err);
  CHECK(cmp.exit_code == 0);
}

TEST_CASE("fold --norms all reports norm folds in JSON beside the BN fields", "[fold][cli][norm_fold]") {
  TempDir tmp;
  const fs::path in = save_model_file(tmp);
  const auto r =
      run_cli({"fold", in.string(), "-o", (tmp / "out.onnx").string(), "--norms", "all", "--verify", "--json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["batch_norm_nodes"] == 0);
  CHECK(j["norm_nodes"] == 2);
  REQUIRE(j["norms_folded"].size() == 1);
  const auto& f = j["norms_folded"][0];
  CHECK(f["norm"] == "ln");
  CHECK(f["norm_op"] == "LayerNormalization");
  CHECK(f["norm_label"] == "ln");
  CHECK(f["norm_index"] == 0);
  CHECK(f["consumer"] == "fc");
  CHECK(f["consumer_op"] == "Gemm");
  CHECK(f["consumer_label"] == "fc");
  CHECK(f["bias_into"] == "C");
  REQUIRE(j["norms_not_folded"].size() == 1);
  CHECK(j["norms_not_folded"][0]["norm"] == "");
  CHECK(j["norms_not_folded"][0]["norm_label"] == "LayerNormalization #3 -> 'y2'");
  CHECK(j["norms_not_folded"][0]["norm_index"] == 3);
  REQUIRE(j["verify_norms"].size() == 1);
  CHECK(j["verify_norms"][0]["norm"] == "ln");
  CHECK(j["verify_norms"][0]["consumer"] == "fc");
  CHECK(j["verify_norms"][0]["pass"] == true);
  CHECK(j["written"] == true);
  CHECK(j["unchanged_copy"] == false);
}

TEST_CASE("fold without --norms leaves LayerNormalization alone, and --norms takes bn or all only",
          "[fold][cli][norm_fold]") {
  TempDir tmp;
  const fs::path in = save_model_file(tmp);
  const auto r = run_cli({"fold", in.string(), "-o", (tmp / "out.onnx").string(), "--json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK_FALSE(j.contains("norm_nodes"));
  CHECK_FALSE(j.contains("norms_folded"));
  CHECK(j["unchanged_copy"] == true);
  const auto text = run_cli({"fold", in.string(), "-o", (tmp / "b.onnx").string(), "--norms", "bn"});
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, !Catch::Contains("LayerNormalization"));
  const auto bad = run_cli({"fold", in.string(), "-o", (tmp / "c.onnx").string(), "--norms", "some"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--norms"));
}

TEST_CASE("fold --norms all --verify: a BN folded into a Gemm whose input a LayerNormalization makes, weights "
          "large enough to stay in the file until saved",
          "[fold][cli][norm_fold]") {
  // x [2, 128] -> LayerNormalization -> Gemm (W [128, 128]: 64 KB, deferred) -> BatchNormalization -> z.
  TempDir tmp;
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 128});
  g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln");
  g.node("Gemm", {"y", "W", "C"}, {"h"}, "fc");
  g.node("BatchNormalization", {"h", "bs", "bb", "bm", "bv"}, {"z"}, "bn");
  g.initializer("s", f32({128}, 1.0));
  g.initializer("b", f32({128}, 0.2));
  g.initializer("W", f32({128, 128}, -0.1));
  g.initializer("C", f32({128}, 0.3));
  g.initializer("bs", f32({128}, 0.9));
  g.initializer("bb", f32({128}, 0.1));
  g.initializer("bm", f32({128}, 0.05));
  g.initializer("bv", f32({128}, 1.5));
  g.output("z");
  std::string bytes;
  REQUIRE(g.model().proto.SerializeToString(&bytes));
  write_file(tmp / "in.onnx", bytes);
  const auto r = run_cli({"fold", (tmp / "in.onnx").string(), "-o", (tmp / "out.onnx").string(), "--norms", "all",
                          "--verify", "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["folded"].size() == 1);
  CHECK(j["norms_folded"].size() == 1);
  CHECK(j["norms_folded"][0]["consumer_label"] == "fc");
  REQUIRE(j["verify"].size() == 1);
  REQUIRE(j["verify_norms"].size() == 1);
  CHECK(j["verify"][0]["pass"] == true);
  CHECK(j["verify_norms"][0]["pass"] == true);
  const auto cmp = run_cli({"eval", (tmp / "in.onnx").string(), "--compare", (tmp / "out.onnx").string(), "--random",
                            "5"});
  INFO(cmp.out << cmp.err);
  CHECK(cmp.exit_code == 0);
}

TEST_CASE("fold --norms all --keep-generated keeps a LayerNormalization whose scale ConstantOfShape makes",
          "[fold][cli][norm_fold]") {
  TempDir tmp;
  GraphBuilder g(17);
  g.input("x", DType::float32, {2, 8});
  g.node("ConstantOfShape", {"shape"}, {"s"}, "fill_s");
  g.node("LayerNormalization", {"x", "s"}, {"y"}, "ln");
  g.node("MatMul", {"y", "W"}, {"z"}, "mm");
  g.initializer("shape", Tensor::from_f64(DType::int64, {1}, {8}));
  g.initializer("W", f32({8, 3}, 0.5));
  g.output("z");
  std::string bytes;
  REQUIRE(g.model().proto.SerializeToString(&bytes));
  write_file(tmp / "in.onnx", bytes);
  const auto kept = run_cli({"fold", (tmp / "in.onnx").string(), "-o", (tmp / "a.onnx").string(), "--norms", "all",
                             "--keep-generated"});
  REQUIRE(kept.exit_code == 0);
  CHECK_THAT(kept.out, Catch::Contains("kept     LayerNormalization 'ln': its weights are generated by "
                                       "ConstantOfShape 'fill_s'; --keep-generated"));
  const auto folded = run_cli({"fold", (tmp / "in.onnx").string(), "-o", (tmp / "b.onnx").string(), "--norms", "all",
                               "--verify"});
  INFO(folded.out << folded.err);
  REQUIRE(folded.exit_code == 0);
  CHECK_THAT(folded.out, Catch::Contains("folded   LayerNormalization 'ln' into MatMul 'mm'"));
  CHECK_THAT(folded.out, Catch::Contains("warning  node 'ln': its weights are generated by ConstantOfShape 'fill_s'; "
                                         "folding writes them out as 32 B of new initializers"));
}

namespace {

// ONNX's model with inputs 1.. made initializers (from test_data_set_0) and
// Y -> MatMul(Wm [D, 3]) -> Add(A [3]) -> z appended; x: X's data, y: ONNX's Y.
Model with_linear(const fs::path& dir, std::map<std::string, Tensor>& x, Tensor& y, std::vector<double>& wm,
                  std::vector<double>& a) {
  Model m = load_model(dir / "model.onnx");
  auto* g = m.proto.mutable_graph();
  const fs::path set = dir / "test_data_set_0";
  for (int i = g->input_size() - 1; i >= 0; --i) {
    Tensor t = read_tensor_file(set / ("input_" + std::to_string(i) + ".pb"));
    if (i == 0) {
      x[g->input(0).name()] = t;
      continue;
    }
    t.name = g->input(i).name();
    encode_tensor(t, g->add_initializer());
    g->mutable_input()->DeleteSubrange(i, 1);
  }
  y = read_tensor_file(set / "output_0.pb");
  const int64_t D = y.dims.back();
  wm.resize(static_cast<size_t>(D * 3));
  for (size_t i = 0; i < wm.size(); ++i) wm[i] = std::cos(0.3 + 0.9 * static_cast<double>(i));
  a = {0.5, -0.25, 0.125};
  encode_tensor(Tensor::from_f64(DType::float32, {D, 3}, wm, "Wm"), g->add_initializer());
  encode_tensor(Tensor::from_f64(DType::float32, {3}, a, "A"), g->add_initializer());
  const std::string y_name = g->output(0).name();
  g->clear_output();
  auto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->add_input(y_name);
  mm->add_input("Wm");
  mm->add_output("mm");
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("mm");
  add->add_input("A");
  add->add_output("z");
  g->add_output()->set_name("z");
  return m;
}

}  // namespace

TEST_CASE("ONNX's LayerNormalization and RMSNormalization models with a MatMul and Add appended fold to ONNX's Y "
          "times W, when they normalize the last axis only",
          "[fold][norm_fold]") {
  int folded = 0, kept = 0;
  for (const auto& e : fs::directory_iterator(testdata("onnx-node-1.23"))) {
    const std::string name = e.path().filename().string();
    const bool ours = name.rfind("test_layer_normalization", 0) == 0 || name.rfind("test_rms_normalization", 0) == 0;
    if (!ours || name.find("expanded") != std::string::npos) continue;
    INFO(name);
    std::map<std::string, Tensor> x;
    Tensor y;
    std::vector<double> wm, a;
    Model m = with_linear(e.path(), x, y, wm, a);
    const Model before = m;
    const NormFoldReport r = fold_norm_affines(m);
    REQUIRE(r.total == 1);
    const int64_t rank = static_cast<int64_t>(y.dims.size());
    int64_t axis = -1;
    for (const auto& at : before.proto.graph().node(0).attribute())
      if (at.name() == "axis") axis = at.i();
    if (axis != -1 && axis != rank - 1) {
      REQUIRE(r.skipped.size() == 1);
      CHECK_THAT(r.skipped[0].reason, Catch::StartsWith("axis = "));
      ++kept;
      continue;
    }
    REQUIRE(r.folded.size() == 1);
    const Tensor z = evaluate(m, x).at("z");
    const auto yv = y.to_f64(), zv = z.to_f64();
    const size_t D = static_cast<size_t>(y.dims.back());
    REQUIRE(zv.size() == yv.size() / D * 3);
    for (size_t row = 0; row < yv.size() / D; ++row)
      for (size_t j = 0; j < 3; ++j) {
        double want = a[j];
        for (size_t k = 0; k < D; ++k) want += yv[row * D + k] * wm[k * 3 + j];
        CHECK(zv[row * 3 + j] == Approx(want).epsilon(1e-4).margin(1e-4));
      }
    const auto checks = verify_norm_folds(before, m, r, 3);
    REQUIRE(checks.size() == 1);
    CHECK(checks[0].pass);
    ++folded;
  }
  CHECK(folded == 14);  // axis 1 of 2-D, 2 of 3-D, 3 of 4-D, -1 and the default, for each op
  CHECK(kept == 24);
}
