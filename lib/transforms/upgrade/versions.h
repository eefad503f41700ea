// What every schema change of the default ONNX domain in opsets 1..23 is,
// for bnorm upgrade: the one table (op, since-version) -> kind, written
// from ONNX 1.23's Changelog.md. The versions themselves come from
// model/op_versions.h; tests/upgrade_versions_test.cpp checks that every
// version in 2..23 of every op has a row here, and that each `types` row
// changes nothing but element types in the schema table (schema.h).
//
//   types  only element types were added: a node crosses it unchanged, when
//          its element types exist at the target version (checked, Error
//          naming the node and the type otherwise)
//   attrs  attributes were added whose default keeps the old meaning:
//          detail "name=default,..." ("1s": all ones; empty: absent; "*":
//          any value, meaningless below, e.g. Cast's saturate, which only
//          acts on float8). Going down they are dropped when at the
//          default; another value is refused, naming it
//   value  an attribute value was added (detail "attr=v1|v2"): going down a
//          node using it is refused
//   step   bnorm's own step (detail: its name, lib/transforms/steps/)
//   onnx   opsets <= 17 only: ONNX 1.12's adapter converts it
//   refused  no conversion (detail: why)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bnorm {

enum class VersionKind { types, attrs, value, step, onnx, refused };

struct VersionChange {
  int version = 0;
  VersionKind kind = VersionKind::onnx;
  const char* detail = "";
};

struct OpChanges {
  const char* op;
  std::vector<VersionChange> changes;  // ascending, versions 2..23 of the op (its first version is no change)
};

// The whole table, sorted by op.
const std::vector<OpChanges>& version_changes();

// The row for `op` at since-version `version`, or nullptr.
const VersionChange* version_change(std::string_view op, int version);

// Since-versions of `op` in 2..17 that only added types or attributes with
// defaults (the ONNX phase keeps such nodes as they are going down, the
// attributes at their default dropped; onnx_converter.cpp).
std::vector<int> type_only_versions_upto_17(std::string_view op);

const char* version_kind_name(VersionKind k);

}  // namespace bnorm
