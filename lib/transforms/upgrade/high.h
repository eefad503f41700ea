// bnorm upgrade above opset 17, where the ONNX library (1.12) knows
// nothing: every default-domain node crossing a schema change between 17
// and 23 is converted by bnorm alone, as the table of schema changes
// (versions.h) says: type-only changes move the version after
// checking the node's element types exist at the target; attributes added
// with defaults are dropped going down when at their default; named steps
// (transforms/upgrade/steps/reduce_axes_18.cpp, split_18.cpp, pad_18.cpp, dft_20.cpp,
// gridsample_20.cpp) rewrite the node. Models written at 18+ are checked
// by bnorm's structural check alone (structure.h), ONNX's checker knowing none.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transforms/upgrade/types.h"

namespace bnorm::upgrade_detail {

// Moves every default-domain node of `m` (every graph) from opset `from`
// to `to`, both in 17..23, and sets the default opset to `to`. Throws one
// Error(unsupported) listing every node that cannot be converted.
void convert_high(onnx::ModelProto& m, int64_t from, int64_t to, UpgradeReport& r);

// What convert_high would do to each node that changes version, without
// changing `m`: one NodePlan per such node (blocker set when it cannot).
std::vector<NodePlan> plan_high(const onnx::ModelProto& m, int64_t from, int64_t to);

}  // namespace bnorm::upgrade_detail
