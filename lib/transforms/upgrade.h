// upgrade: moves a whole model to another ai.onnx opset, up or down.
//
// BatchNormalization and InstanceNormalization nodes are converted by
// bnorm's own steps (steps/, one per schema change, listed in
// upgrade_plan.h); Softmax, LogSoftmax and Hardmax across 12 <-> 13 by
// steps/softmax_12_13.cpp; every other default-domain op by the ONNX
// library's converter (onnx::version_conversion), which never sees the
// nodes bnorm converts (they are hidden behind placeholders while it runs,
// upgrade_onnx.h). Nodes of other domains are left as they are. Subgraphs
// (If/Loop/Scan) are converted too. The IR version is raised to what the
// target opset needs and never lowered (docs/upgrade.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"
#include "transforms/steps/step.h"

namespace bnorm {

inline constexpr int64_t kUpgradeMinOpset = 1;
inline constexpr int64_t kUpgradeMaxOpset = 23;
inline constexpr int64_t kUpgradeDefaultOpset = 15;  // `bnorm upgrade` without --to
// The newest opset ONNX 1.12's converter and checker know: above it bnorm converts and checks alone.
inline constexpr int64_t kOnnxConverterMaxOpset = 17;

struct UpgradeOptions {
  int64_t target = kUpgradeDefaultOpset;  // kUpgradeMinOpset .. kUpgradeMaxOpset
  bool inference = false;  // the model is an inference model: training nodes become inference nodes
  // Going down below the version where an op gained bfloat16, its bfloat16
  // nodes compute in float between Casts (upgrade_bf16.h); false
  // (--no-casts): one Error naming every such node instead.
  bool casts = true;
  bool fuse_norms = false;  // --fuse-norms: normalization decompositions become the op (fuse_norms.h)
};

// A node other than BN/IN that bnorm converted itself (Softmax 12 -> 13, ...).
struct OpRewrite {
  std::string graph, name, op, what;
  std::vector<std::string> added;
  std::string label;  // model/node_label.h
};

// A normalization decomposition --fuse-norms recognised and left as it is.
struct FuseMiss {
  std::string graph, label, op, why;  // label: the decomposition's first node; op: what it would become
};

struct UpgradeReport {
  int64_t from_opset = 0, to_opset = 0;
  int64_t from_ir = 0, to_ir = 0;
  std::vector<steps::NodeReport> nodes;     // every BN/IN node, in graph order
  std::vector<OpRewrite> rewrites;
  std::vector<std::string> made_inference;  // labels of the nodes --inference changed
  std::vector<std::string> removed;         // constants the conversion stopped reading, removed
  std::vector<std::string> warnings;        // every node warning, with the node named
  std::vector<FuseMiss> not_fused;          // --fuse-norms: decompositions left, and why
};

// Converts `model` in place. Up to opset 17, ONNX 1.12's converter with
// bnorm's steps around it; above 17 bnorm's steps alone (upgrade_high.h);
// across 17 both, through opset 17. Throws Error: usage (target out of
// range), unsupported (a case bnorm refuses; at opsets above 17 the message
// lists every node that blocks), input.
UpgradeReport upgrade_model(Model& model, const UpgradeOptions& options);

// ONNX's checker with full shape inference (strict, types checked), what
// onnx.checker.check_model(m, full_check=True) does, for a model at opset
// <= 17; above, bnorm's own schema check (upgrade_high.h: counts,
// attributes, element types), ONNX 1.12 knowing no such opset. Throws
// Error(input) with the checker's message. External data locations are checked against
// `model_dir` (the directory the model's side files are in).
void check_model_full(const onnx::ModelProto& model, const std::filesystem::path& model_dir = {});

// The IR version a model at `opset` needs (ONNX's table: opsets 1-8 -> 3,
// 9 -> 4, 10 -> 5, 11 -> 6, 12-14 -> 7, 15-18 -> 8, 19-20 -> 9, 21-22 -> 10, 23 -> 11).
int64_t required_ir_version(int64_t opset);

// The element types declared in `m` (graph inputs/outputs, value_info,
// initializers, Constant values) that no op has at opset `to` (float8
// before 19, int4/uint4 before 21, float4e2m1 before 23), one line each
// naming where and the type; and the IR version those types need
// (float8: 9, int4: 10, float4e2m1: 11; else 3).
std::vector<std::string> type_blockers(const onnx::ModelProto& m, int64_t to);
int64_t model_types_ir(const onnx::ModelProto& m);

}  // namespace bnorm
