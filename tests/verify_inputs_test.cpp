// fold --verify and upgrade --verify on the user's data (issue 25, item 3):
// --input and --inputs give the inputs, the whole model is judged as
// eval --compare judges it, a fold whose whole model cannot run says so and
// keeps its per-fold checks, and inputs the input model cannot run on are an
// error naming the input model, with how to give inputs.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "model/tensor_file.h"
#include "support/cli.h"

using namespace bnorm;
using namespace bnorm::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Tensor image(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 3;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>((s >> 8) / 16777216.0 * 4 - 2);
  }
  return t;
}

}  // namespace

TEST_CASE("fold --verify and upgrade --verify judge the whole model on inputs given with --input or --inputs",
          "[verify][cli]") {
  TempDir tmp;
  const std::string demo = testdata("demo_opset6.onnx").string();
  const fs::path x = tmp / "x.npy";
  write_tensor_file(image({1, 3, 16, 16}, 1), x);
  for (int s = 0; s < 2; ++s) {
    const fs::path set = tmp / ("sets/test_data_set_" + std::to_string(s));
    fs::create_directories(set);
    write_tensor_file(image({1, 3, 16, 16}, 10 + s), set / "input_0.pb");
  }
  const std::string out = (tmp / "out.onnx").string();
  for (const char* cmd : {"fold", "upgrade"}) {
    INFO(cmd);
    auto r = run_cli({cmd, demo, "-o", out, "--verify", "--input", "input=" + x.string()});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("verified   the ") &&
                          Catch::Contains("values both models compute: within the input model's own rounding"));
    r = run_cli({cmd, demo, "-o", out, "--verify", "--inputs", (tmp / "sets").string(), "--json"});
    CHECK(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["verify_model"]["reference"] == "a-float64");
    CHECK(j["verify_model"]["values"]["failed"] == 0);
    CHECK(j["verify_model"]["values"]["compared"].get<int>() > 1);
    // Options that need --verify, or contradict --inputs.
    r = run_cli({cmd, demo, "-o", out, "--input", "input=" + x.string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--input has no effect without --verify"));
    r = run_cli({cmd, demo, "-o", out, "--verify", "--inputs", (tmp / "sets").string(), "--input",
                 "input=" + x.string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--inputs gives every input"));
  }
}

TEST_CASE("inputs the input model cannot run on are an error naming the input model, with how to give inputs",
          "[verify][cli]") {
  TempDir tmp;
  const std::string demo = testdata("demo_opset6.onnx").string();
  const fs::path x = tmp / "x.npy";
  write_tensor_file(image({1, 3, 8, 8}, 1), x);  // the model declares [1, 3, 16, 16]
  for (const char* cmd : {"fold", "upgrade"}) {
    const auto r = run_cli({cmd, demo, "-o", (tmp / "out.onnx").string(), "--verify", "--input", "input=" + x.string()});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("while running the input model for --verify") &&
                          Catch::Contains("give real ones with --input NAME=FILE or --inputs DIR"));
    CHECK_FALSE(fs::exists(tmp / "out.onnx"));
  }
}

TEST_CASE("fold --verify says when the whole model cannot run, and keeps its per-fold checks", "[verify][cli]") {
  TempDir tmp;
  Model m = load_model(testdata("demo_opset6.onnx"));
  auto* d = m.proto.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
  d->set_dim_param("N");  // a symbolic batch: random inputs need --dim
  const std::string path = (tmp / "n.onnx").string(), out = (tmp / "out.onnx").string();
  save_model(m, path);
  auto r = run_cli({"fold", path, "-o", out, "--verify", "--json"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["verify_model"]["ran"] == false);
  CHECK_THAT(j["verify_model"]["not_run"].get<std::string>(), Catch::Contains("'N'"));
  CHECK(j["verify"].size() == 3);
  r = run_cli({"fold", path, "-o", out, "--verify"});
  CHECK_THAT(r.out, Catch::Contains("not run    the whole-model check (the per-fold checks are all there is)"));
  r = run_cli({"fold", path, "-o", out, "--verify", "--dim", "N=2", "--json"});
  CHECK(r.exit_code == 0);
  j = json::parse(r.out);
  CHECK(j["verify_model"]["ran"] == true);
  CHECK(j["verify_model"]["values"]["failed"] == 0);
}

TEST_CASE("inspect --fp16 takes --input-range with --random", "[verify][cli]") {
  const std::string demo = testdata("demo_opset6.onnx").string();
  auto r = run_cli({"inspect", demo, "--fp16", "--random", "1", "--input-range", "input=0:100"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("float16 risks (inputs measured)"));
  r = run_cli({"inspect", demo, "--fp16", "--input-range", "input=0:100"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--input-range has no effect without --random"));
  r = run_cli({"inspect", demo, "--input-range", "input=0:100"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("without --fp16"));
  r = run_cli({"inspect", demo, "--fp16", "--random", "1", "--input-range", "nope=0:1"});
  CHECK(r.exit_code == 2);
}
