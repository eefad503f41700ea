// The type-only schema changes up to opset 17 of the table of schema
// changes (lib/transforms/upgrade/versions.cpp) against ONNX 1.12's own schemas: at each listed version the op keeps its
// inputs, outputs and attributes (but for attributes added with a default
// that keeps the old meaning, e.g. Reshape-14's allowzero).
// Whole models going down across them: tests/upgrade_ops_test.cpp.
#include <onnx/defs/schema.h>

#include <catch2/catch.hpp>
#include <set>

#include "transforms/upgrade/onnx_converter.h"
#include "transforms/upgrade/versions.h"

using namespace bnorm;

namespace {

std::set<std::string> attribute_names(const onnx::OpSchema& s) {
  std::set<std::string> out;
  for (const auto& [name, a] : s.attributes()) out.insert(name);
  return out;
}

}  // namespace

TEST_CASE("every type-only schema change keeps the op's inputs, outputs and attributes", "[upgrade]") {
  int checked = 0;
  for (const auto& row : version_changes()) {
    const std::string op = row.op;
    for (int v : upgrade_detail::type_only_versions(op)) {
      ++checked;
      INFO(op << "-" << v);
      const auto* now = onnx::OpSchemaRegistry::Schema(op, v, "");
      const auto* before = onnx::OpSchemaRegistry::Schema(op, v - 1, "");
      REQUIRE(now);
      REQUIRE(before);
      CHECK(now->SinceVersion() == v);
      CHECK(now->inputs().size() == before->inputs().size());
      CHECK(now->outputs().size() == before->outputs().size());
      auto attrs = attribute_names(*now);
      for (const auto& d : upgrade_detail::defaulted_attributes()) {
        if (op == d.op && v == d.version) attrs.erase(d.attr);
      }
      // Constant-11 added sparse_value, Constant-12 value_float(s)/int(s)/string(s):
      // bnorm writes those as `value` going down, and refuses sparse_value below 11.
      if (op == "Constant" && v == 11) attrs.erase("sparse_value");
      if (op == "Constant" && v == 12) {
        for (const char* a : {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"})
          attrs.erase(a);
      }
      auto old_attrs = attribute_names(*before);
      if (v == 6) old_attrs.erase("consumed_inputs");  // optional at 1: nothing to write going down
      if (op == "Gemm" && v == 7) old_attrs.erase("broadcast");  // set to 1 going down
      // Gemm-11 made C optional (bnorm requires C given when crossing it), Loop-11
      // the loop-carried values (bnorm requires one).
      if (!(op == "Gemm" && v == 11) && !(op == "Loop" && v == 11)) CHECK(now->min_input() == before->min_input());
      CHECK(attrs == old_attrs);
    }
  }
  CHECK(checked > 80);
}
