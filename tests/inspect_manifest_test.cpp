// inspect agrees with what the test-data generator says it built
// (testdata/manifest.json, written by hand in testdata/generate.py).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/model.h"
#include "support/cli.h"
#include "transforms/inspect.h"

using namespace bnorm;
using nlohmann::json;

namespace {

// Manifest graph paths read "if_node/then_branch"; inspect's read
// "main/if_node.then_branch".
std::string manifest_graph(const std::string& g) {
  if (g == "main") return g;
  std::string out = "main/" + g;
  const auto slash = out.rfind('/');
  out[slash] = '.';
  return out;
}

}  // namespace

TEST_CASE("inspect reports every normalization node as the generator built it", "[inspect]") {
  const json manifest = json::parse(test::read_file(test::testdata("manifest.json")));
  int models = 0;
  for (const auto& [file, expect] : manifest.items()) {
    if (expect.contains("expected_load_error")) continue;
    INFO(file);
    ++models;
    const Model model = load_model(test::testdata(file));
    const InspectReport r = inspect(model);
    CHECK(r.ir_version == expect["ir_version"].get<int64_t>());
    CHECK(r.default_opset == expect["opset"].get<int64_t>());
    const auto& nodes = expect["norm_nodes"];
    REQUIRE(r.norms.size() == nodes.size());
    for (const auto& n : nodes) {
      const std::string name = n["name"];
      INFO(name);
      auto it = std::find_if(r.norms.begin(), r.norms.end(), [&](const NormReport& x) { return x.name == name; });
      REQUIRE(it != r.norms.end());
      CHECK(it->op == n["op"].get<std::string>());
      CHECK(it->version == n["version"].get<int>());
      CHECK(it->mode == n["mode"].get<std::string>());
      CHECK(it->graph == manifest_graph(n["graph"]));
      CHECK(it->foldable == n["foldable"].get<bool>());
      if (n["producer"].is_string()) {
        CHECK(it->x_producer.find("'" + n["producer"].get<std::string>() + "'") != std::string::npos);
      }
      if (!it->foldable) CHECK_FALSE(it->fold.empty());
    }
  }
  CHECK(models >= 15);
}

TEST_CASE("inspect fills in defaults and names legacy attributes", "[inspect]") {
  const InspectReport r = inspect(load_model(test::testdata("legacy_opset1.onnx")));
  CHECK(r.opset_implicit);
  CHECK(r.default_opset == 1);
  const NormReport& bn = r.norms.at(0);
  CHECK(bn.legacy == std::vector<std::string>{"consumed_inputs", "is_test", "spatial"});
  CHECK(std::find(bn.upgrade.begin(), bn.upgrade.end(), "drop consumed_inputs") != bn.upgrade.end());
  const InspectReport absent = inspect(load_model(test::testdata("bn_absent_is_test_opset6.onnx")));
  const NormReport& t = absent.norms.at(0);
  CHECK(t.mode == "training");
  CHECK(t.mode_reason.find("absent") != std::string::npos);
  const auto is_test = std::find_if(t.attributes.begin(), t.attributes.end(), [](auto& a) { return a.first == "is_test"; });
  REQUIRE(is_test != t.attributes.end());
  CHECK(is_test->second == "0 (default)");
}

TEST_CASE("inspect reports mixed T, T1, T2 types of BatchNormalization-15", "[inspect]") {
  const InspectReport r = inspect(load_model(test::testdata("bn15_mixed_types.onnx")));
  const NormReport& n = r.norms.at(0);
  CHECK(n.version == 15);
  CHECK(n.T == "float16");
  CHECK(n.T1 == "bfloat16");
  CHECK(n.T2 == "float");
}

TEST_CASE("inspect names where parameters come from", "[inspect]") {
  const InspectReport r = inspect(load_model(test::testdata("constant_params_opset12.onnx")));
  bool constant_seen = false;
  for (const auto& n : r.norms) {
    for (const auto& p : n.params) constant_seen = constant_seen || p.source == "Constant node";
  }
  CHECK(constant_seen);
  const InspectReport demo = inspect(load_model(test::testdata("demo_opset6.onnx")));
  CHECK(demo.norms.at(0).params.at(0).source == "initializer (also a graph input)");
}

TEST_CASE("inspect's JSON carries the documented fields", "[inspect]") {
  const json j = to_json(inspect(load_model(test::testdata("demo_opset6.onnx"))));
  for (const char* key : {"file", "ir_version", "producer", "opset_import", "opset_implicit", "default_opset", "graphs",
                          "nodes", "op_counts", "initializers", "external_data", "norm_nodes", "foldable"}) {
    CHECK(j.contains(key));
  }
  const json& n = j["norm_nodes"][0];
  for (const char* key : {"graph", "name", "op", "version", "attributes", "legacy_attributes", "mode", "mode_reason",
                          "types", "params", "x_producer", "foldable", "fold", "upgrade_to_15", "warnings"}) {
    CHECK(n.contains(key));
  }
  CHECK(j["foldable"] == 3);
}
