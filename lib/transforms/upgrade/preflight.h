// Pre-flight of bnorm upgrade: for a model and a target opset, every node's
// planned conversion and every node that blocks it, without converting
// anything. `bnorm inspect --to N` prints it; `bnorm upgrade` refuses with
// every blocker at once (not the first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "transforms/upgrade/types.h"

namespace bnorm {

// Plans converting `model` to opset `target` (1..kUpgradeMaxOpset; Error(usage)
// otherwise). The blockers are found by running the conversion on a copy:
// what upgrade_model would refuse, every node of it. Never throws for a
// blocking node; only for a target out of range or an unreadable model.
UpgradePlan plan_upgrade_model(const Model& model, int64_t target);

}  // namespace bnorm
