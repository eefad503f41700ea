// bnorm upgrade going down: nodes whose op gained bfloat16 at a version the
// model crosses compute in float between Casts (transforms/upgrade/steps/bf16_casts.cpp), at
// the model's own opset, before anything else converts the model; or, with
// --no-casts, one error naming every such node.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transforms/upgrade/types.h"

namespace bnorm::upgrade_detail {

// A node that computes in float between Casts going from `from` to `to`.
struct Bf16Site {
  std::string graph;  // "main", or the subgraph's path
  std::string label;  // node_label with its index, as NodePlan.label
  std::string name, op;
  std::string what;   // "casts bfloat16 <-> float: ..." (steps::describe_bf16_casts)
  std::vector<std::string> added;  // "Cast 'name'", ...
};

// Going down (to < from), every such node of `m` (every graph) gets its
// Casts; `r.rewrites` lists each with the Casts added. With `allowed`
// false, Error(unsupported) naming every node instead, saying it would
// need casts. A node below opset 13 is refused (bfloat16 starts there),
// every one in one error.
void cast_bf16_sites(onnx::ModelProto& m, int64_t from, int64_t to, bool allowed, UpgradeReport& r);

// The sites cast_bf16_sites would rewrite (`m` unchanged); a site that
// cannot be (target below 13) is left out.
std::vector<Bf16Site> bf16_sites(const onnx::ModelProto& m, int64_t from, int64_t to);

}  // namespace bnorm::upgrade_detail
