// upgrade: moves a whole model to another ai.onnx opset, up or down.
//
// The table of schema changes (versions.h) says, for every op and version,
// who converts a node across it: bnorm's own steps (steps/, each a Step the
// table's rows carry: BatchNormalization and InstanceNormalization, Softmax
// 12 <-> 13, the changes ONNX 1.12's adapters get wrong, everything above
// 17), nothing (type-only), or, up to 17, the ONNX library's converter
// (onnx::version_conversion), which never sees the nodes bnorm converts
// (they are hidden behind placeholders while it runs, onnx_converter.h). Nodes of other domains are left as they are. Subgraphs
// (If/Loop/Scan) are converted too. The IR version is raised to what the
// target opset needs and never lowered (docs/upgrade.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"
#include "transforms/upgrade/ir_types.h"
#include "transforms/upgrade/types.h"

namespace bnorm {

// Converts `model` in place. Up to opset 17, ONNX 1.12's converter with
// bnorm's steps around it; above 17 bnorm's steps alone (high.h);
// across 17 both, through opset 17. Throws Error: usage (target out of
// range), unsupported (a case bnorm refuses; at opsets above 17 the message
// lists every node that blocks), input.
UpgradeReport upgrade_model(Model& model, const UpgradeOptions& options);

// ONNX's checker with full shape inference (strict, types checked), what
// onnx.checker.check_model(m, full_check=True) does, for a model at opset
// <= 17; above, bnorm's own schema check (high.h: counts,
// attributes, element types), ONNX 1.12 knowing no such opset. Throws
// Error(input) with the checker's message. External data locations are checked against
// `model_dir` (the directory the model's side files are in).
void check_model_full(const onnx::ModelProto& model, const std::filesystem::path& model_dir = {});


}  // namespace bnorm
