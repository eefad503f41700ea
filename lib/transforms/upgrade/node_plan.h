// The plan of every node's conversion to a target opset (what inspect --to
// shows, without the trial run of preflight.h), and every node that blocks
// it that the passes' own planners find. upgrade_model uses it to list every
// blocker at once when a pass refuses a node; plan_upgrade_model adds a
// trial conversion on a copy.
#pragma once

#include <cstdint>

#include "model/model.h"
#include "transforms/upgrade/types.h"

namespace bnorm {

// Error(usage) when `target` is not an opset upgrade converts to.
UpgradePlan plan_nodes(const Model& model, int64_t target);

}  // namespace bnorm
