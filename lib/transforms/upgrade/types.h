// The types every pass of upgrade shares, at the bottom of the wing: the
// options, the report (what each node went through), the plan (what each
// node would go through, for inspect --to) and how nodes are named in
// blockers. Nothing here includes a pass; every pass, the preflight and
// upgrade_model include this.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace bnorm {

inline constexpr int64_t kUpgradeMinOpset = 1;
inline constexpr int64_t kUpgradeMaxOpset = 28;
inline constexpr int64_t kUpgradeDefaultOpset = 15;  // `bnorm upgrade` without --to
// The newest opset ONNX 1.12's converter and checker know: above it bnorm converts and checks alone.
inline constexpr int64_t kOnnxConverterMaxOpset = 17;

// What happened to one normalization node, for the report.
struct NodeReport {
  std::string graph, name, op;
  std::string label;                    // model/node_label.h: the name, or "Op -> 'first output'"
  int from = 0, to = 0;                 // schema versions
  std::vector<std::string> steps;       // "6->7", ...
  std::vector<std::string> dropped;     // "consumed_inputs", "is_test = 1"
  std::vector<std::string> set;         // "training_mode = 1"
  std::vector<std::string> added;       // "Flatten 'bn1_flatten'"
  std::vector<std::string> warnings;
  bool made_inference = false;          // --inference turned a training node into an inference node
};

struct UpgradeOptions {
  int64_t target = kUpgradeDefaultOpset;  // kUpgradeMinOpset .. kUpgradeMaxOpset
  bool inference = false;  // the model is an inference model: training nodes become inference nodes
  // Going down below the version where an op gained bfloat16, its bfloat16
  // nodes compute in float between Casts (bf16_pass.h); false
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
  std::vector<NodeReport> nodes;     // every BN/IN node, in graph order
  std::vector<OpRewrite> rewrites;
  std::vector<std::string> made_inference;  // labels of the nodes --inference changed
  std::vector<std::string> removed;         // values the conversion stopped reading, removed with their makers
  std::vector<std::string> warnings;        // every node warning, with the node named
  std::vector<FuseMiss> not_fused;          // --fuse-norms: decompositions left, and why
};

struct NodePlan {
  std::string graph;                 // "main", or the subgraph's path
  std::string label;                 // model/node_label.h: the name, or "Op #index -> 'output'"
  std::string quoted;                // quoted_label: 'name', or the label of an unnamed node
  std::string op;
  int from = 0, to = 0;              // schema versions at the model's opset and at the target (0: none)
  std::string by;                    // "bnorm" (own steps), "onnx" (ONNX 1.12's converter), "type-only", "unchanged"
  std::vector<std::string> changes;  // one line per schema change crossed: "18 -> 13: axes input -> attribute (step reduce_axes_18)"
  std::string blocker;               // why the node cannot be converted; empty when it can
};

struct UpgradePlan {
  int64_t from_opset = 0, to_opset = 0;
  int64_t from_ir = 0, to_ir = 0;
  std::vector<NodePlan> nodes;        // every default-domain node whose schema version changes, graph order
  std::vector<std::string> blockers;  // "'name' (Op-V): why" (quoted_label), every one; empty: the conversion would run
};

// A node as blockers name it: 'name' (quoted, with its subgraph path), or
// its label when it has no name ("Gelu #0 -> 'g'").
std::string quoted_label(const onnx::NodeProto& n, int index, const std::string& graph_path);

}  // namespace bnorm
