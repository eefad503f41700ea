#include "transforms/upgrade/plan.h"

#include <fmt/format.h>

#include "model/op_versions.h"
#include "transforms/upgrade/versions.h"

namespace bnorm {

namespace {

void add_step_effects(const NormNode& n, int from, int to, std::vector<std::string>& out) {
  const bool training = n.training;
  const bool bn = n.kind == NormKind::batch_norm;
  if (from == 1 && to == 6 && n.consumed_inputs) out.push_back("drop consumed_inputs");
  if (!bn) return;
  if (from == 6 && to == 7) {
    if (n.is_test) out.push_back(fmt::format("drop is_test = {}", *n.is_test));
    if (training && n.outputs < 5) {
      out.push_back(fmt::format("training ({}): keep it as the five-output form (warning; --inference makes it an "
                                "inference node)", n.mode_reason));
    }
  }
  if (from == 7 && to == 9) {
    if (!n.spatial) out.push_back("spatial = 0: rewrite as Flatten + BatchNormalization + Reshape");
    else if (n.spatial_attr) out.push_back("drop spatial = 1");
  }
  if (from == 9 && to == 14 && training) {
    out.push_back("set training_mode = 1; keep Y, running_mean, running_var; saved_mean/saved_var dropped if "
                  "unused, computed by added nodes if used");
  }
}

}  // namespace

std::vector<std::string> plan_upgrade(const NormNode& n, int64_t target_opset) {
  std::vector<std::string> out;
  const int target = norm_schema_version(n.op_name(), target_opset);
  if (target > n.version) {
    for (const VersionChange* c : rows_crossed(n.op_name(), n.version, target)) {
      add_step_effects(n, op_version_at(n.op_name(), c->version - 1), c->version, out);
    }
  }
  if (target < n.version) out.push_back(fmt::format("downgrade from {} to {}", n.version, target));
  return out;
}

}  // namespace bnorm
