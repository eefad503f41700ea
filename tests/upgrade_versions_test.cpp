// The table of schema changes (lib/transforms/upgrade/versions.cpp) against
// the versions (model/op_versions.h) and the schemas (transforms/upgrade/schema.h),
// both from ONNX 1.23's Changelog: every version in 2..28 of every op is
// type-only, handled by a named step, left to ONNX's adapter (<= 17 only),
// or refused with a reason; every type-only row only adds element types.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "model/attr_values.h"
#include "model/op_versions.h"
#include "transforms/upgrade/steps/step.h"
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

TEST_CASE("every version 2..28 of every op has a row: type-only, a named step, ONNX's adapter (<= 17) or a refusal", "[upgrade][versions]") {
  int rows = 0;
  for (const auto& h : all_op_histories()) {
    for (int v : h.versions) {
      if (v == h.versions.front() || v > 28) continue;
      INFO(h.op << "-" << v);
      const VersionChange* c = version_change(h.op, v);
      REQUIRE(c);
      ++rows;
      if (c->kind == VersionKind::onnx) CHECK(v <= 17);
      if (c->kind == VersionKind::step) CHECK(c->step != nullptr);
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

TEST_CASE("the step table: every step row carries a step, each step is named once, has both functions and is defined in the file it names", "[upgrade][versions]") {
  std::map<const Step*, std::vector<std::pair<std::string, int>>> rows_of;
  for (const auto& row : version_changes()) {
    for (const auto& c : row.changes) {
      INFO(row.op << "-" << c.version);
      if (c.kind == VersionKind::step) REQUIRE(c.step != nullptr);
      if (!c.step) continue;
      // Besides step rows, only type-only rows at <= 17 carry a step, for the nodes its match accepts.
      CHECK((c.kind == VersionKind::step || (c.kind == VersionKind::types && c.version <= 17 && c.step->applies)));
      if (c.kind == VersionKind::step) CHECK(std::string(c.detail).empty());  // the step says it all
      rows_of[c.step].emplace_back(row.op, c.version);
    }
  }
  const std::vector<const Step*> steps = table_steps();
  CHECK(steps.size() == rows_of.size());
  CHECK(steps.size() == 45);  // the declarations in versions.h
  std::set<std::string> names;
  for (const Step* st : steps) {
    INFO(st->name);
    CHECK(names.insert(st->name).second);
    CHECK(st->up != nullptr);
    CHECK(st->down != nullptr);
    const auto& rows = rows_of[st];
    REQUIRE(!rows.empty());
    // Above 17 the steps run row by row (high.cpp): one row of each op, no match of their own.
    const bool high = rows.front().second > 17;
    std::set<std::string> ops;
    for (const auto& r : rows) {
      CHECK((r.second > 17) == high);
      if (high) CHECK(ops.insert(r.first).second);
    }
    if (high) CHECK(st->applies == nullptr);
    std::ifstream in(std::string(BNORM_SOURCE_DIR) + "/lib/transforms/upgrade/steps/" + st->file + ".cpp");
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str().find(std::string("const Step ") + st->name + "{\"" + st->name + "\"") != std::string::npos);
  }
}

TEST_CASE("the steps a node runs up to 17 and their order come from the table", "[upgrade][versions]") {
  auto names = [](const std::string& op, int64_t from, int64_t to, int inputs = 1) {
    onnx::NodeProto n;
    n.set_op_type(op);
    for (int i = 0; i < inputs; ++i) n.add_input("x" + std::to_string(i));
    std::vector<std::string> out;
    for (const Step* st : steps::own_steps(n, from, to)) out.push_back(st->name);
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(names("BatchNormalization", 15, 1) == V{"bn_14_15", "bn_9_14", "bn_7_9", "bn_6_7", "bn_1_6"});
  CHECK(names("BatchNormalization", 6, 9) == V{"bn_6_7", "bn_7_9"});
  CHECK(names("BatchNormalization", 9, 13).empty());
  CHECK(names("Softmax", 13, 10) == V{"softmax_12_13", "axis_11"});
  CHECK(names("Softmax", 10, 12) == V{"axis_11"});
  CHECK(names("Split", 13, 12) == V{"split"});
  CHECK(names("Split", 1, 17) == V{"split"});
  CHECK(names("Relu", 14, 6).empty());
  CHECK(names("Dropout", 13, 12) == V{"dropout"});  // its match: the schema version changes
  CHECK(names("Resize", 11, 13).empty());           // ONNX's adapter going up across 13
  CHECK(names("Resize", 13, 11) == V{"resize_10"});
  CHECK(names("Resize", 10, 9) == V{"resize_10"});   // below its first version: Upsample
  CHECK(names("Upsample", 10, 12) == V{"upsample"});  // deprecated at 10: Resize
  CHECK(names("Scan", 9, 8) == V{"scan_8_9"});
  CHECK(names("Scan", 11, 8) == (V{"axis_11", "scan_8_9"}));
  CHECK(names("Scan", 8, 9) == V{"scan_8_9"});
  CHECK(names("Loop", 11, 10, 2) == V{"loop_11"});    // no loop-carried value: refused in the step
  CHECK(names("Loop", 11, 10, 3).empty());            // type-only
  CHECK(names("Constant", 9, 8, 0).empty());          // no value Constant-1 lacks
  CHECK(names("ReduceSum", 12, 13) == V{"axis_11"});
  CHECK(names("Split", 17, 18).empty());              // above 17: row by row (high.cpp)
}

TEST_CASE("each attribute value a `value` row adds is in the value table from that version on and not before",
          "[upgrade][versions]") {
  int rows = 0;
  for (const auto& op : version_changes()) {
    for (const auto& c : op.changes) {
      if (c.kind != VersionKind::value) continue;
      const std::string detail = c.detail;  // "attr=v1|v2"
      const auto eq = detail.find('=');
      REQUIRE(eq != std::string::npos);
      const std::string attr = detail.substr(0, eq);
      std::stringstream values(detail.substr(eq + 1));
      const int before = op_version_at(op.op, c.version - 1);
      for (std::string v; std::getline(values, v, '|');) {
        INFO(op.op << "-" << c.version << " " << attr << " " << v);
        const auto* now = allowed_attr_values(op.op, attr, c.version);
        const auto* then = allowed_attr_values(op.op, attr, before);
        REQUIRE(now);
        REQUIRE(then);
        CHECK(std::count(now->begin(), now->end(), v) == 1);
        CHECK(std::count(then->begin(), then->end(), v) == 0);
      }
      ++rows;
    }
  }
  CHECK(rows == 3);  // Pad-19 wrap, ScatterElements-18 and ScatterND-18 max|min (Resize-19: the resize_19 step)
}

TEST_CASE("every attribute a version makes required has its conversion: the list is known", "[upgrade][versions]") {
  // (op, attribute, version): required from there, optional or absent just before. Each is written going up by a
  // step (or refused by name where the older version gives no default): Concat axis (concat_4), LpPool
  // kernel_shape (lppool_2: refused without it), Pad pads (pad_2_11: from paddings), Upsample scales (upsample_1_7:
  // from height_scale and width_scale). A new one fails here until it has its conversion.
  std::set<std::string> found;
  for (const auto& op : version_changes()) {
    std::vector<int> versions{1};
    for (const auto& c : op.changes) versions.push_back(c.version);
    for (size_t i = 1; i < versions.size(); ++i) {
      const OpSchemaInfo* before = schema_info(op.op, versions[i - 1]);
      const OpSchemaInfo* now = schema_info(op.op, versions[i]);
      if (!before || !now || versions[i] > 28) continue;
      for (const auto& [name, required] : now->attrs) {
        if (!required) continue;
        bool was_required = false;
        for (const auto& [n0, r0] : before->attrs) was_required = was_required || (n0 == name && r0);
        if (!was_required) found.insert(std::string(op.op) + " " + name + " " + std::to_string(versions[i]));
      }
    }
  }
  CHECK(found == std::set<std::string>{"Concat axis 4", "LpPool kernel_shape 2", "Pad pads 2", "Upsample scales 7"});
}
