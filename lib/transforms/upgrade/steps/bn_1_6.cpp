// BatchNormalization 1 <-> 6: `consumed_inputs` removed.
//
//   Before (BN-1): BN(X, scale, B, mean, var) consumed_inputs=[0,0,0,1,1] epsilon is_test momentum spatial
//   After  (BN-6): BN(X, scale, B, mean, var)                             epsilon is_test momentum spatial
//
// Preconditions: none; every BN-1 has a BN-6 with the same meaning.
// Formula: unchanged. `consumed_inputs` only told old runtimes that mean and
// var are updated in place; it never changed a result.
// Down: BN-1 requires the attribute; it gets [0, 0, 0, 1, 1], what PyTorch's
// exporter wrote for every BN (mean and var are the updated inputs).
#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

std::string ints_str(const onnx::AttributeProto& a) {
  std::string s;
  for (int64_t v : a.ints()) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return "[" + s + "]";
}

}  // namespace

void drop_consumed_inputs(NormSite& s) {
  if (const auto* a = find_attr(s.node, "consumed_inputs")) {
    s.report.dropped.push_back("consumed_inputs = " + ints_str(*a));
    remove_attr(s.node, "consumed_inputs");
  }
}

void bn_1_6_up(NormSite& s) { drop_consumed_inputs(s); }

void bn_1_6_down(NormSite& s) {
  set_ints(s.node, "consumed_inputs", {0, 0, 0, 1, 1});
  s.report.set.push_back("consumed_inputs = [0, 0, 0, 1, 1]");
}

const Step bn_1_6{"bn_1_6", "bn_1_6", bn_1_6_up, bn_1_6_down};

}  // namespace bnorm::steps
