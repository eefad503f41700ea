// bnorm eval as CI pipelines run it, and fold checked by it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "model/tensor_file.h"
#include "model/tensor_proto.h"
#include "support/cli.h"

using namespace bnorm;
using namespace bnorm::test;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("eval runs ONNX's BatchNormalization and InstanceNormalization conformance folders", "[eval][cli]") {
  const std::string node = std::string(ONNX_TESTDATA_DIR) + "/node";
  for (const char* glob : {"test_batchnorm*", "test_instancenorm*"}) {
    const auto r = run_cli({"eval", node, "--filter", glob, "--json"});
    INFO(glob << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["failed"] == 0);
    CHECK(j["skipped"] == 0);
    CHECK(j["passed"].get<int>() >= 2);
  }
  const auto pt = run_cli({"eval", std::string(ONNX_TESTDATA_DIR) + "/pytorch-converted", "--filter", "test_BatchNorm*"});
  CHECK(pt.exit_code == 0);
  CHECK(pt.out.find("5 passed, 0 failed, 0 skipped") != std::string::npos);
}

TEST_CASE("a folded model computes what the original computed", "[eval][fold][cli]") {
  TempDir tmp;
  for (const char* name : {"demo_opset6.onnx", "fold_cases_opset13.onnx", "resnet_block_opset9.onnx",
                           "subgraph_if_opset11.onnx", "constant_params_opset9.onnx", "constant_params_opset12.onnx",
                           "small_cnn_opset6.onnx", "small_cnn_opset9.onnx"}) {
    INFO(name);
    const fs::path in = testdata(name), out = tmp / name;
    const auto fold = run_cli({"fold", in.string(), "-o", out.string()});
    REQUIRE(fold.exit_code == 0);
    for (const char* seed : {"1", "2"}) {
      const auto r = run_cli({"eval", in.string(), "--compare", out.string(), "--random", seed, "--json"});
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(json::parse(r.out)["pass"] == true);
    }
  }
}

TEST_CASE("eval --compare fails with exit 1 when the models differ", "[eval][cli]") {
  TempDir tmp;
  Model m = load_model(testdata("demo_opset6.onnx"));
  for (auto& t : *m.proto.mutable_graph()->mutable_initializer()) {
    if (t.name() != "bn1.scale") continue;
    Tensor v = decode_tensor(t);
    v.data<float>()[0] += 0.5f;
    encode_tensor(v, &t);
  }
  save_model(m, tmp / "changed.onnx");
  const auto r = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--compare", (tmp / "changed.onnx").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("FAIL logits") != std::string::npos);
  CHECK(r.out.find("the models differ") != std::string::npos);
}

TEST_CASE("eval writes outputs as .pb and .npy that read back equal", "[eval][cli]") {
  TempDir tmp;
  const auto r = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--random", "7", "--output-dir",
                          tmp.path().string(), "--json"});
  REQUIRE(r.exit_code == 0);
  const Tensor pb = read_tensor_file(tmp / "logits.pb");
  const Tensor npy = read_tensor_file(tmp / "logits.npy");
  CHECK(pb.dims == std::vector<int64_t>{1, 10});
  CHECK(pb.bytes == npy.bytes);
  // The same seed gives the same outputs; --input takes them back.
  const auto again = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--random", "7", "--json"});
  CHECK(json::parse(again.out)["outputs"][0]["mean"] == json::parse(r.out)["outputs"][0]["mean"]);
}

TEST_CASE("eval without data for an input, or with a bad option, is a usage error", "[eval][cli]") {
  const auto missing = run_cli({"eval", testdata("demo_opset6.onnx").string()});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("input") != std::string::npos);
  const auto bad = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--input", "nonsense"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("NAME=VALUE") != std::string::npos);
  const auto mixed = run_cli({"eval", testdata("").string(), "--random", "1"});
  CHECK(mixed.exit_code == 2);
}

TEST_CASE("eval --repeat runs one model N times, weights decoded once, and times the runs", "[eval][cli][repeat]") {
  const std::string model = testdata("small_cnn_opset9.onnx").string();
  const auto once = run_cli({"eval", model, "--random", "3", "--json"});
  REQUIRE(once.exit_code == 0);
  const json one = json::parse(once.out);
  CHECK(one["timing"].is_null());
  const auto r = run_cli({"eval", model, "--random", "3", "--repeat", "4", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  // The outputs are the single run's (run 1's, which every later run repeated bit for bit).
  CHECK(j["outputs"] == one["outputs"]);
  const json& t = j["timing"];
  CHECK(t["runs"] == 4);
  CHECK(t["identical"] == true);
  CHECK(t["threads"].get<int>() >= 1);
  CHECK(t["min_ms"].get<double>() > 0);
  CHECK(t["min_ms"].get<double>() <= t["median_ms"].get<double>());
  CHECK(t["cpu_min_ms"].get<double>() <= t["cpu_median_ms"].get<double>());
  const auto text = run_cli({"eval", model, "--random", "3", "--repeat", "2"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("timing: 2 runs on ") != std::string::npos);
  // --float64 runs repeat too.
  const auto f64 = run_cli({"eval", model, "--random", "3", "--repeat", "2", "--float64", "--json"});
  INFO(f64.err);
  CHECK(f64.exit_code == 0);
  CHECK(json::parse(f64.out)["timing"]["identical"] == true);
}

TEST_CASE("eval --repeat applies to one model only, and takes a count from 1", "[eval][cli][repeat]") {
  const std::string model = testdata("small_cnn_opset9.onnx").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"eval", model, "--random", "1", "--repeat", "0"},
        std::vector<std::string>{"eval", model, "--random", "1", "--repeat", "x"},
        std::vector<std::string>{"eval", model, "--compare", model, "--repeat", "2"},
        std::vector<std::string>{"eval", std::string(ONNX_TESTDATA_DIR) + "/node", "--filter", "test_relu",
                                 "--repeat", "2"}}) {
    const auto r = run_cli(args);
    INFO(args[args.size() - 3] << " " << r.err);
    CHECK(r.exit_code == 2);
  }
}
