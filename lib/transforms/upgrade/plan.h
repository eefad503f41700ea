// The schema changes of BatchNormalization and InstanceNormalization, as
// one table, and what moving one node across them would do.
//
// Each row is one schema change and names the two functions that convert a
// node across it, up and down (lib/transforms/steps/<op>_<from>_<to>.cpp).
// `bnorm upgrade` applies one row per version crossed; `bnorm inspect` uses
// plan_upgrade() to say what that would do to a node.
#pragma once

#include <string>
#include <vector>

#include "model/norm_op.h"

namespace bnorm {

namespace steps {
struct NormSite;
}

using StepFn = void (*)(steps::NormSite&);

struct SchemaChange {
  NormKind kind;
  int from;
  int to;
  const char* summary;       // what changes going from `from` to `to`
  StepFn up;                 // from -> to
  StepFn down;               // to -> from
  const char* down_summary;  // what going back does
};

// Sorted by op, then version: BN 1->6, 6->7, 7->9, 9->14, 14->15; IN 1->6.
const std::vector<SchemaChange>& schema_changes();

// The rows crossed going from schema version `from` to `to` of `kind`, in
// the order they apply (descending when going down).
std::vector<const SchemaChange*> steps_between(NormKind kind, int from, int to);

// What converting `n` to the schema in force at `target_opset` does, one
// line per effect ("drop consumed_inputs", ...). Empty: nothing changes.
std::vector<std::string> plan_upgrade(const NormNode& n, int64_t target_opset);

}  // namespace bnorm
