// After ONNX's converter ran: puts every hidden node back, converted by
// bnorm's steps (normalization nodes: one step per schema change crossed;
// Softmax family across 12 <-> 13) or unchanged (other domains), with the
// nodes and initializers the steps added spliced in around it.
#pragma once

#include <onnx/onnx_pb.h>

#include <vector>

#include "model/graph_index.h"
#include "transforms/upgrade/types.h"
#include "transforms/upgrade/onnx_converter.h"

namespace bnorm::upgrade_detail {

struct RestoreContext {
  const GraphIndex* index;           // over the shape-inferred model before conversion
  const std::vector<Hidden>* hidden;
  int64_t from = 0, to = 0;          // opsets
  bool inference = false;
};

void restore_nodes(onnx::ModelProto& work, const RestoreContext& ctx, UpgradeReport& report);

}  // namespace bnorm::upgrade_detail
