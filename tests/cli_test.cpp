// The CLI as a user runs it: exit codes, where output goes, JSON.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "support/cli.h"

using namespace bnorm::test;
namespace fs = std::filesystem;

TEST_CASE("bnorm with no command or an unknown one is a usage error", "[cli]") {
  CHECK(run_cli({}).exit_code == 2);
  const auto r = run_cli({"frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
}

TEST_CASE("bnorm --help and --version succeed", "[cli]") {
  const auto help = run_cli({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("inspect") != std::string::npos);
  const auto version = run_cli({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("bnorm") != std::string::npos);
}

TEST_CASE("inspect prints a table of the normalization nodes", "[cli][inspect]") {
  const auto r = run_cli({"inspect", testdata("demo_opset6.onnx").string()});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("3 normalization nodes, 3 foldable") != std::string::npos);
  CHECK(r.out.find("bn1") != std::string::npos);
  CHECK(r.out.find("into Conv 'conv1'") != std::string::npos);
}

TEST_CASE("inspect --json prints one JSON document on stdout", "[cli][inspect]") {
  const auto r = run_cli({"inspect", "--json", testdata("subgraph_if_opset11.onnx").string()});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["norm_nodes"].size() == 2);
  CHECK(j["graphs"] == 3);
}

// Found by fuzz_inspect (tests/fuzz_regressions/inspect/): nlohmann::json
// throws on invalid UTF-8 when printing, and ONNX names are any bytes.
TEST_CASE("every --json output is valid JSON when names are not UTF-8", "[cli][inspect]") {
  TempDir tmp;
  auto m = bnorm::load_model(testdata("demo_opset6.onnx"));
  for (auto& n : *m.proto.mutable_graph()->mutable_node()) {
    if (n.name() == "bn1") n.set_name("bn\xff\xfe" "1");
  }
  bnorm::save_model(m, tmp / "latin1.onnx");
  for (const std::string command : {"inspect", "fold", "upgrade"}) {
    std::vector<std::string> args = {command, "--json", (tmp / "latin1.onnx").string()};
    if (command != "inspect") args.insert(args.end(), {"-o", (tmp / (command + ".onnx")).string()});
    const auto r = run_cli(args);
    INFO(command << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);  // throws on invalid UTF-8
    CHECK(j.dump().find("bn\xEF\xBF\xBD\xEF\xBF\xBD" "1") != std::string::npos);  // each bad byte is U+FFFD
  }
}

// Bad inputs (every command, every kind): bad_input_test.cpp.
