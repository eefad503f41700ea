// upgrade: moves a whole model to another ai.onnx opset, up or down.
//
// BatchNormalization and InstanceNormalization nodes are converted by
// bnorm's own steps (steps/, one per schema change, listed in
// plan.h); Softmax, LogSoftmax and Hardmax across 12 <-> 13 by
// transforms/upgrade/steps/softmax_12_13.cpp; every other default-domain op by the ONNX
// library's converter (onnx::version_conversion), which never sees the
// nodes bnorm converts (they are hidden behind placeholders while it runs,
// onnx_converter.h). Nodes of other domains are left as they are. Subgraphs
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
