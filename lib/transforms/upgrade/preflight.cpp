// The pre-flight of bnorm upgrade: the node plan (node_plan.h), then, when
// it finds no blocker, the whole conversion run on a copy, so that what it
// would refuse (ONNX's converter, ONNX's checker and bnorm's structural
// check of the result) is a blocker too.
#include "transforms/upgrade/preflight.h"

#include "core/error.h"
#include "transforms/upgrade/node_plan.h"
#include "transforms/upgrade/upgrade.h"

namespace bnorm {

UpgradePlan plan_upgrade_model(const Model& model, int64_t target) {
  UpgradePlan plan = plan_nodes(model, target);
  if (plan.blockers.empty()) {
    Model copy = model;
    UpgradeOptions o;
    o.target = target;
    try {
      const UpgradeReport r = upgrade_model(copy, o);
      plan.to_ir = r.to_ir;
      check_model_full(copy.proto, model.dir());  // what upgrade's check would refuse (unless --no-check)
    } catch (const Error& e) {
      plan.blockers.push_back(e.message());
    }
  }
  return plan;
}

}  // namespace bnorm
