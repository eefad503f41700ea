// The table of type-only schema changes (lib/transforms/upgrade_onnx.cpp)
// against ONNX's own schemas: at each listed version the op keeps its
// inputs, outputs and attributes (Reshape-14 adds allowzero, default 0);
// and whole models go down across them with their numbers.
#include <onnx/defs/schema.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "support.h"
#include "transforms/upgrade_onnx.h"

using namespace bnorm;

namespace {

std::set<std::string> attribute_names(const onnx::OpSchema& s) {
  std::set<std::string> out;
  for (const auto& [name, a] : s.attributes()) out.insert(name);
  return out;
}

}  // namespace

TEST_CASE("every type-only schema change keeps the op's inputs, outputs and attributes", "[upgrade]") {
  for (const char* op : {"Abs", "Add", "Concat", "Div", "Dropout", "Exp", "Flatten", "Gemm", "Identity", "LeakyRelu", "Log",
                         "MatMul", "MaxPool", "Mul", "Neg", "Reciprocal", "Relu", "Reshape", "Sigmoid", "Sqrt", "Sub",
                         "Sum", "Tanh", "Transpose"}) {
    const auto* versions = upgrade_detail::type_only_versions(op);
    REQUIRE(versions);
    for (int v : *versions) {
      INFO(op << "-" << v);
      const auto* now = onnx::OpSchemaRegistry::Schema(op, v, "");
      const auto* before = onnx::OpSchemaRegistry::Schema(op, v - 1, "");
      REQUIRE(now);
      REQUIRE(before);
      CHECK(now->SinceVersion() == v);
      CHECK(now->inputs().size() == before->inputs().size());
      CHECK(now->outputs().size() == before->outputs().size());
      auto attrs = attribute_names(*now);
      if (std::string(op) == "Reshape" && v == 14) attrs.erase("allowzero");
      auto old_attrs = attribute_names(*before);
      if (std::string(op) == "Gemm" && v == 7) old_attrs.erase("broadcast");  // set to 1 going down
      // Gemm-11 made C optional (bnorm requires C given when crossing it).
      if (!(std::string(op) == "Gemm" && v == 11)) CHECK(now->min_input() == before->min_input());
      CHECK(attrs == old_attrs);
    }
  }
}

TEST_CASE("whole CNNs at opset 15 go down and back up with their numbers", "[upgrade]") {
  test::TempDir tmp;
  // Dropout below 12 (ratio as an attribute, is_test below 7) has no bnorm
  // rewrite yet, nor Add below 7 (broadcast attributes): small_cnn goes down
  // to 12, the ResNet block to 7.
  for (const auto& [name, target] : {std::pair{"small_cnn_opset9.onnx", "12"}, {"resnet_block_opset9.onnx", "7"}}) {
    INFO(name << " to " << target);
    const auto in = test::testdata(name).string();
    const auto up = (tmp / "15.onnx").string(), down = (tmp / "6.onnx").string(), again = (tmp / "15b.onnx").string();
    REQUIRE(test::run_cli({"-q", "upgrade", in, "-o", up}).exit_code == 0);
    const auto r = test::run_cli({"-q", "upgrade", up, "-o", down, "--to", target});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(test::run_cli({"-q", "upgrade", down, "-o", again}).exit_code == 0);
    for (const auto& other : {down, again}) {
      const auto c = test::run_cli({"eval", in, "--compare", other, "--random", "4", "--json"});
      INFO(c.out << c.err);
      CHECK(c.exit_code == 0);
    }
  }
}
