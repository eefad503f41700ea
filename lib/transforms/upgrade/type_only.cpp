// The nodes the ONNX phase keeps as they are going down (onnx_converter.h):
// those crossing only schema changes that added element types, or
// attributes whose default keeps the older meaning, at that default (the
// `types` and `attrs` rows of the table, versions.h). ONNX 1.12 lacks
// adapters for several (e.g. Relu 14 -> 13), and its others would convert
// nothing. Their element types are checked at the target first.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>

#include <algorithm>

#include "core/error.h"
#include "model/graph_index.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "transforms/upgrade/onnx_converter.h"
#include "transforms/upgrade/schema.h"
#include "transforms/upgrade/types.h"
#include "transforms/upgrade/versions.h"

namespace bnorm::upgrade_detail {

const std::vector<DefaultedAttribute>& defaulted_attributes() {
  // The `attrs` rows up to 17 of the table of schema changes (versions.h).
  static const std::vector<DefaultedAttribute> table = [] {
    std::vector<DefaultedAttribute> out;
    static std::vector<std::string> texts;  // the names and values the entries point into
    texts.reserve(64);
    for (const auto& row : version_changes()) {
      for (const auto& c : row.changes) {
        if (c.kind != VersionKind::attrs || c.version > 17) continue;
        const std::string d = c.detail;
        for (size_t k = 0; k < d.size();) {
          const size_t comma = std::min(d.find(',', k), d.size()), eq = d.find('=', k);
          texts.push_back(d.substr(k, eq - k));
          const char* attr = texts.back().c_str();
          texts.push_back(d.substr(eq + 1, comma - eq - 1));
          out.push_back({row.op, c.version, attr, texts.back().c_str()});
          k = comma + 1;
        }
      }
    }
    return out;
  }();
  return table;
}

std::vector<int> type_only_versions(const std::string& op) {
  // The versions the table of every schema change (versions.h)
  // marks type-only; crossing Constant-11/-12, Gemm-7/-11, Flatten-11,
  // MaxPool-10 and Reshape-14 has the conditions type_only_downgrade()
  // checks. Tested by tests/upgrade_type_only_test.cpp.
  return type_only_versions_upto_17(op);
}

namespace {

// An attribute's value as a user reads it: 1, 'CRD', [2, 2].
std::string attr_text(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() != name) continue;
    if (a.type() == onnx::AttributeProto::STRING) return "'" + a.s() + "'";
    if (a.type() == onnx::AttributeProto::INTS) return fmt::format("[{}]", fmt::join(a.ints(), ", "));
    return std::to_string(a.i());
  }
  return "absent";
}

// Absent, or the value that keeps the older version's meaning (`value`:
// an int, a string, "1s" for all ones, "" for absent only).
bool at_default(const onnx::NodeProto& n, const DefaultedAttribute& d) {
  const std::string value = d.value;
  for (const auto& a : n.attribute()) {
    if (a.name() != d.attr) continue;
    if (value == "1s") return std::all_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v == 1; });
    if (value.empty()) return false;
    if (a.type() == onnx::AttributeProto::STRING) return a.s() == value;
    return std::to_string(a.i()) == value;
  }
  return true;
}

}  // namespace

std::vector<std::string> attributes_without_equivalent(const onnx::NodeProto& n, int64_t from, int64_t to) {
  std::vector<std::string> out;
  if (to >= from) return out;
  for (const auto& d : defaulted_attributes()) {
    if (n.op_type() != d.op || to >= d.version || from < d.version || at_default(n, d)) continue;
    const std::string value = d.value;
    out.push_back(fmt::format("attribute '{}' ({}) has no equivalent below {}-{}, which added it (only {} can be "
                              "dropped)",
                              d.attr, attr_text(n, d.attr), d.op, d.version,
                              value == "1s" ? std::string("all ones") : value.empty() ? std::string("its absence")
                                                                                      : "its default " + value));
  }
  return out;
}

// The strict checker run on every written model catches a type the older
// schema lacks as well.
bool type_only_downgrade(const onnx::NodeProto& n, int64_t from, int64_t to) {
  if (to >= from) return false;
  const std::vector<int> versions = type_only_versions(n.op_type());
  if (versions.empty()) return false;
  // Changes that are type-only for the node at hand: attributes added
  // with defaults at their default, Flatten-11 (negative axis) with a non-negative axis, Gemm-11
  // (optional C) with C given; Gemm-7 (C always broadcast) gets broadcast = 1
  // in hide_nodes.
  for (const auto& d : defaulted_attributes()) {
    if (n.op_type() == d.op && to < d.version && from >= d.version && !at_default(n, d)) return false;
  }
  if (n.op_type() == "Flatten" && to < 11) {
    for (const auto& a : n.attribute())
      if (a.name() == "axis" && a.i() < 0) return false;
  }
  if (n.op_type() == "Gemm" && to < 11 && (n.input_size() < 3 || n.input(2).empty())) return false;
  if (n.op_type() == "Loop" && to < 11 && n.input_size() < 3) return false;  // refused (converted_by_own_step)
  if (n.op_type() == "Constant" && to < 11) {
    for (const auto& a : n.attribute())
      if (a.name() == "sparse_value") return false;
  }
  for (int64_t o = from; o > to; --o) {
    const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(o), "");
    if (!schema) return false;
    const int v = schema->SinceVersion();
    if (v <= to) break;
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) return false;
  }
  return true;
}

void check_kept_types(const onnx::ModelProto& inferred, const GraphIndex& index, int64_t from, int64_t to) {
  if (to >= from) return;
  std::vector<std::string> lines;
  for (const auto& scope : index.scopes()) {
    const onnx::GraphProto& g = *scope->graph;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (!is_default_domain(n.domain()) || is_norm_node(n) || converted_by_own_step(n, from, to)) continue;
      const int vf = op_version_at(n.op_type(), from), vt = op_version_at(n.op_type(), to);
      if (vf == vt || vt == 0 || !type_only_downgrade(n, from, to)) continue;
      const OpSchemaInfo* schema = schema_info(n.op_type(), vt);
      if (!schema) continue;
      const std::string p = type_problem(n, *schema, [&](const std::string& v) -> std::string {
        const onnx::TypeProto* t = index.declared_type(*scope, v);
        return t ? type_text(*t) : "";
      });
      if (!p.empty()) lines.push_back(fmt::format("{} ({}-{}): {}", quoted_label(n, i, scope->path), n.op_type(), vf, p));
    }
  }
  (void)inferred;
  if (lines.empty()) return;
  throw Error(ErrorKind::unsupported, fmt::format("{} node{} cannot be converted to opset {}:\n  {}", lines.size(),
                                                  lines.size() == 1 ? "" : "s", to, fmt::join(lines, "\n  ")))
      .with_hint("these versions only added element types; the node's types do not exist at the target");
}

}  // namespace bnorm::upgrade_detail
