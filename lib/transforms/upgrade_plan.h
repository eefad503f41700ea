// The schema changes of BatchNormalization and InstanceNormalization, as
// one table, and what moving one node across them would do.
//
// Each row is one schema change. `bnorm upgrade` applies one conversion
// step per row crossed (lib/transforms/steps/, issue 4); `bnorm inspect`
// uses plan_upgrade() to say what that would do to a node.
#pragma once

#include <string>
#include <vector>

#include "model/norm_op.h"

namespace bnorm {

struct SchemaChange {
  NormKind kind;
  int from;
  int to;
  const char* summary;  // what changes going from `from` to `to`
};

// Sorted by op, then version: BN 1->6, 6->7, 7->9, 9->14, 14->15; IN 1->6.
const std::vector<SchemaChange>& schema_changes();

// What converting `n` to the schema in force at `target_opset` does, one
// line per effect ("drop consumed_inputs", ...). Empty: nothing changes.
std::vector<std::string> plan_upgrade(const NormNode& n, int64_t target_opset);

}  // namespace bnorm
