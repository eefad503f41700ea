// upgrade --fuse-norms: replaces normalization decompositions, as exporters
// write them, by the single op where the model's opset has it:
// LayerNormalization (17), GroupNormalization (18; per-channel parameters
// from 21), RMSNormalization (23). Runs on the converted model, so the
// fused op is written at the target opset. Exact formulas only, up to
// float rounding (the matchers layernorm.cpp, rmsnorm.cpp, groupnorm.cpp,
// sharing match.h); anything else is left as it is, and each decomposition recognised but not fused is
// reported with the reason (docs/upgrade.md, "Fusing decompositions").
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "transforms/upgrade/types.h"

namespace bnorm {

// Fuses in `m` (every graph, subgraphs included) at its default-domain
// opset; `dir` is where its external data is. Each fusion is a
// `r.rewrites` entry ("fused ReduceMean, Sub, ... into LayerNormalization
// (...)"), each decomposition left alone a `r.not_fused` entry. Constants
// only the removed nodes read are removed (listed in `r.removed`).
void fuse_norms(onnx::ModelProto& m, const std::filesystem::path& dir, UpgradeReport& r);

}  // namespace bnorm
