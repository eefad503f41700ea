// The public API (include/bnorm/, docs/api.md) on the test models: what it
// returns agrees with what the CLI prints, reports of in-memory models have
// null paths, and errors are bnorm::Error.
#include <bnorm/bnorm.h>

#include <onnx/onnx_pb.h>

#include <atomic>

#include <catch2/catch.hpp>

#include "support/cli.h"

using namespace bnorm::test;
namespace api = bnorm::api;

TEST_CASE("api: a model goes to bytes and back unchanged, and runs", "[api]") {
  const api::ModelPtr m = api::load(testdata("demo_opset6.onnx").string());
  CHECK(api::opset(*m) == 6);
  CHECK(api::ir_version(*m) == 3);
  const std::string bytes = api::to_bytes(*m);
  // The same ModelProto (protobuf may order fields otherwise than the file).
  onnx::ModelProto from_api, from_file;
  REQUIRE(from_api.ParseFromString(bytes));
  REQUIRE(from_file.ParseFromString(read_file(testdata("demo_opset6.onnx"))));
  CHECK(from_api.SerializeAsString() == from_file.SerializeAsString());
  const api::ModelPtr back = api::load_bytes(bytes, "demo");
  const auto inputs = api::make_inputs(*back, 7);
  const auto a = api::run(*m, inputs), b = api::run(*back, inputs);
  REQUIRE(a.size() == 1);
  CHECK(a.at("logits").bytes == b.at("logits").bytes);
}

TEST_CASE("api: the reports are the CLI's documents, paths null when not named", "[api]") {
  TempDir tmp;
  const std::string path = testdata("demo_opset6.onnx").string();
  api::ModelPtr m = api::load(path);
  const api::Report inspected = api::inspect(*m);
  CHECK(inspected.data["schema"] == "bnorm.inspect/1");
  CHECK(inspected.data["file"].is_null());
  // The same document as `bnorm inspect --json` but for the path.
  auto cli = nlohmann::json::parse(run_cli({"inspect", path, "--json"}).out);
  cli["file"] = nullptr;
  CHECK(cli == inspected.data);

  api::UpgradeRequest up;
  up.to = 13;
  up.verify = true;
  const api::Report upgraded = api::upgrade(*m, up);
  CHECK(upgraded.passed());
  CHECK(upgraded.data["input"].is_null());
  CHECK(upgraded.data["to_opset"] == 13);
  CHECK(upgraded.data["written"] == false);
  CHECK(api::opset(*m) == 13);
  api::save(*m, (tmp / "up.onnx").string());
  CHECK(run_cli({"eval", path, "--compare", (tmp / "up.onnx").string(), "--random", "0"}).exit_code == 0);

  api::FoldRequest fold;
  fold.verify = true;
  fold.input = "named";
  const api::Report folded = api::fold(*m, fold);
  CHECK(folded.data["input"] == "named");
  CHECK(folded.data["folded"].size() == 3);
  CHECK(folded.json().find("\"schema\": \"bnorm.fold/1\"") != std::string::npos);
}

TEST_CASE("api: errors are bnorm::Error with the file, the node and the exit code", "[api]") {
  try {
    api::load("/nonexistent/model.onnx");
    FAIL("no error");
  } catch (const bnorm::Error& e) {
    CHECK(e.message() == "/nonexistent/model.onnx: no such file");
    CHECK(e.exit_code() == 2);
  }
  api::ModelPtr m = api::load(testdata("demo_opset6.onnx").string());
  api::UpgradeRequest up;
  up.to = 99;
  CHECK_THROWS_AS(api::upgrade(*m, up), bnorm::Error);
  CHECK_THROWS_AS(api::load_bytes("not a model", "junk"), bnorm::Error);
}

TEST_CASE("api: an evaluation stops at the next node once the flag its thread watches is set", "[api][interrupt]") {
  const api::ModelPtr m = api::load(testdata("demo_opset6.onnx").string());
  const auto inputs = api::make_inputs(*m, 7);
  std::atomic<bool> stop{false};
  {
    api::InterruptScope watch(stop);
    CHECK(api::run(*m, inputs).size() == 1);  // not set: runs
    stop = true;
    try {
      api::run(*m, inputs);
      FAIL("the evaluation was not interrupted");
    } catch (const bnorm::Error& e) {
      CHECK(e.message() == "interrupted");
      CHECK(e.exit_code() == 2);
    }
    // A fold's verify evaluates too (the error says which fold it was proving).
    api::ModelPtr folded = api::copy(*m);
    api::FoldRequest fold;
    fold.verify = true;
    CHECK_THROWS_WITH(api::fold(*folded, fold), Catch::Contains("interrupted (while verifying its fold"));
  }
  // Out of the scope the flag is nobody's.
  CHECK(api::run(*m, inputs).size() == 1);
}
