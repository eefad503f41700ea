// The table of schema changes (lib/transforms/upgrade/versions.cpp) against
// the versions (model/op_versions.h) and the schemas (transforms/upgrade/schema.h),
// both from ONNX 1.23's Changelog: every version in 2..23 of every op is
// type-only, handled by a named step, left to ONNX's adapter (<= 17 only),
// or refused with a reason; every type-only row only adds element types.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "model/op_versions.h"
#include "transforms/upgrade/high.h"
#include "transforms/upgrade/schema.h"
#include "transforms/upgrade/versions.h"

using namespace bnorm;

namespace {

std::set<std::string> attr_names(const OpSchemaInfo& s) {
  std::set<std::string> out;
  for (const auto& a : s.attrs) out.insert(a.first);
  return out;
}

std::vector<std::string> value_names(const std::vector<SchemaValue>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.name + (x.optional ? "?" : "") + (x.variadic ? "*" : ""));
  return out;
}

bool subset(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

// Type-only rows up to 17 that cross an attribute change under a condition
// transforms/upgrade/onnx_converter.cpp checks (type_only_downgrade): the attribute at its
// default, C given (Gemm-11), broadcast = 1 written (Gemm-7), value written
// as `value` and no sparse_value (Constant-11/-12).
const std::set<std::pair<std::string, int>> kConditional{{"Constant", 11}, {"Constant", 12}, {"Gemm", 7},
                                                         {"Gemm", 11},     {"MaxPool", 10},  {"Reshape", 14},
                                                         {"Loop", 11}};
// Type-only rows that also removed types: going down a node's types are
// checked at the target (check_kept_types); going up (<= 17) is ONNX's adapter.
const std::set<std::pair<std::string, int>> kTypesRemoved{{"Erf", 13}};

}  // namespace

TEST_CASE("every version 2..23 of every op has a row: type-only, a named step, ONNX's adapter (<= 17) or a refusal", "[upgrade][versions]") {
  int rows = 0;
  for (const auto& h : all_op_histories()) {
    for (int v : h.versions) {
      if (v == h.versions.front() || v > 23) continue;
      INFO(h.op << "-" << v);
      const VersionChange* c = version_change(h.op, v);
      REQUIRE(c);
      ++rows;
      if (c->kind == VersionKind::onnx) CHECK(v <= 17);
      if (c->kind == VersionKind::step && v > 17) CHECK(upgrade_detail::high_step_exists(c->detail));
      if (c->kind == VersionKind::refused || c->kind == VersionKind::attrs || c->kind == VersionKind::value) {
        CHECK(std::string(c->detail).size() > 0);
      }
    }
  }
  size_t listed = 0;
  for (const auto& row : version_changes()) {
    INFO(row.op);
    REQUIRE(op_history(row.op));
    listed += row.changes.size();
    for (const auto& c : row.changes) CHECK(std::count(op_history(row.op)->versions.begin(), op_history(row.op)->versions.end(), c.version) == 1);
  }
  CHECK(listed == static_cast<size_t>(rows));
  CHECK(std::is_sorted(version_changes().begin(), version_changes().end(),
                       [](const OpChanges& a, const OpChanges& b) { return std::string(a.op) < b.op; }));
}

TEST_CASE("a type-only row keeps inputs, outputs and attributes and only adds element types", "[upgrade][versions]") {
  int checked = 0;
  for (const auto& row : version_changes()) {
    const OpHistory* h = op_history(row.op);
    for (const auto& c : row.changes) {
      if (c.kind != VersionKind::types && c.kind != VersionKind::attrs && c.kind != VersionKind::value) continue;
      if (kConditional.count({row.op, c.version})) continue;
      const auto it = std::find(h->versions.begin(), h->versions.end(), c.version);
      const OpSchemaInfo* now = schema_info(row.op, c.version);
      const OpSchemaInfo* before = schema_info(row.op, *(it - 1));
      INFO(row.op << "-" << c.version);
      REQUIRE(now);
      REQUIRE(before);
      ++checked;
      CHECK(now->min_in == before->min_in);
      CHECK(now->max_in == before->max_in);
      CHECK(now->min_out == before->min_out);
      CHECK(now->max_out == before->max_out);
      CHECK(value_names(now->inputs) == value_names(before->inputs));
      CHECK(value_names(now->outputs) == value_names(before->outputs));
      std::set<std::string> had = attr_names(*before);
      const std::set<std::string> has = attr_names(*now);
      if (std::string(c.detail).find("consumed_inputs removed") == 0) CHECK(had.erase("consumed_inputs") == 1);
      std::set<std::string> added;
      for (const auto& a : has)
        if (!had.count(a)) added.insert(a);
      CHECK(std::includes(has.begin(), has.end(), had.begin(), had.end()));
      if (c.kind == VersionKind::attrs) {
        std::set<std::string> named;
        std::string d = c.detail;
        for (size_t k = 0; k < d.size();) {
          const size_t eq = d.find('=', k), comma = d.find(',', k);
          named.insert(d.substr(k, eq - k));
          k = comma == std::string::npos ? d.size() : comma + 1;
        }
        CHECK(named == added);
      } else {
        CHECK(added.empty());
      }
      if (kTypesRemoved.count({row.op, c.version})) continue;
      for (int i = 0; i < static_cast<int>(before->inputs.size()); ++i) CHECK(subset(before->allowed(true, i), now->allowed(true, i)));
      for (int i = 0; i < static_cast<int>(before->outputs.size()); ++i) CHECK(subset(before->allowed(false, i), now->allowed(false, i)));
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("the schema table reads inputs, attributes and type constraints from the Changelog", "[upgrade][versions]") {
  const OpSchemaInfo* r = schema_info("ReduceMax", 20);
  REQUIRE(r);
  CHECK(r->min_in == 1);
  CHECK(r->max_in == 2);
  REQUIRE(r->inputs.size() == 2);
  CHECK(r->inputs[1].name == "axes");
  CHECK(r->inputs[1].optional);
  CHECK(r->allowed(true, 1) == std::vector<std::string>{"tensor(int64)"});
  CHECK(subset({"tensor(bool)", "tensor(bfloat16)"}, r->allowed(true, 0)));
  CHECK(r->has_attr("noop_with_empty_axes"));
  CHECK_FALSE(r->has_attr("axes"));
  const OpSchemaInfo* cast = schema_info("Cast", 19);
  REQUIRE(cast);
  bool to_required = false;
  for (const auto& [name, required] : cast->attrs) to_required = to_required || (name == "to" && required);
  CHECK(to_required);
  CHECK(subset({"tensor(float8e4m3fn)"}, cast->allowed(false, 0)));
  const OpSchemaInfo* concat = schema_info("Concat", 13);
  REQUIRE(concat);
  CHECK(concat->max_in == -1);
  CHECK(concat->inputs[0].variadic);
  CHECK(concat->allowed(true, 5) == concat->allowed(true, 0));  // variadic: every input has the first's types
  CHECK(tensor_type_name(17) == "tensor(float8e4m3fn)");
  CHECK(ir_version_of_type(22) == 10);
}
