// Pre-flight of bnorm upgrade: for a model and a target opset, every node's
// planned conversion and every node that blocks it, without converting
// anything. `bnorm inspect --to N` prints it; `bnorm upgrade` refuses with
// every blocker at once (not the first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace bnorm {

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

// Plans converting `model` to opset `target` (1..kUpgradeMaxOpset; Error(usage)
// otherwise). The blockers are found by running the conversion on a copy:
// what upgrade_model would refuse, every node of it. Never throws for a
// blocking node; only for a target out of range or an unreadable model.
UpgradePlan plan_upgrade_model(const Model& model, int64_t target);

}  // namespace bnorm
