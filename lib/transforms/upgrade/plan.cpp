#include "transforms/upgrade/plan.h"

#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm {

const std::vector<SchemaChange>& schema_changes() {
  static const std::vector<SchemaChange> table{
      {NormKind::batch_norm, 1, 6, "consumed_inputs removed", steps::bn_1_6_up, steps::bn_1_6_down,
       "consumed_inputs = [0, 0, 0, 1, 1] added"},
      {NormKind::batch_norm, 6, 7, "is_test removed: the output count decides the mode", steps::bn_6_7_up,
       steps::bn_6_7_down, "is_test set: 1 for inference, 0 for training"},
      {NormKind::batch_norm, 7, 9, "spatial removed: parameters are always per channel", steps::bn_7_9_up,
       steps::bn_7_9_down, "nothing: spatial's default 1 is per channel"},
      {NormKind::batch_norm, 9, 14, "training_mode added; training outputs become Y, running_mean, running_var",
       steps::bn_9_14_up, steps::bn_9_14_down,
       "training_mode = 1 becomes the five-output form; inputs cast to one type; bfloat16 refused"},
      {NormKind::batch_norm, 14, 15, "scale/B (T1) and mean/var (T2) types split from X's", steps::bn_14_15_up,
       steps::bn_14_15_down, "scale/B and X cast to one type"},
      {NormKind::instance_norm, 1, 6, "consumed_inputs removed", steps::in_1_6_up, steps::in_1_6_down,
       "nothing: consumed_inputs is optional at 1"},
  };
  return table;
}

std::vector<const SchemaChange*> steps_between(NormKind kind, int from, int to) {
  std::vector<const SchemaChange*> out;
  for (const auto& row : schema_changes()) {
    if (row.kind != kind) continue;
    if (from <= row.from && row.to <= to) out.push_back(&row);
    if (to <= row.from && row.to <= from) out.insert(out.begin(), &row);
  }
  return out;
}

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
  for (const auto& step : schema_changes()) {
    if (step.kind != n.kind) continue;
    if (n.version <= step.from && step.to <= target) add_step_effects(n, step.from, step.to, out);
  }
  if (target < n.version) out.push_back(fmt::format("downgrade from {} to {}", n.version, target));
  return out;
}

}  // namespace bnorm
