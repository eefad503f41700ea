// BatchNormalization 6 <-> 7: `is_test` removed; the output count decides the mode.
//
//   Before (BN-6): BN(X, scale, B, mean, var) is_test=1 -> Y
//   After  (BN-7): BN(X, scale, B, mean, var)           -> Y
//
//   Before (BN-6): BN(...) is_test=0 or absent -> Y [, mean, var, saved_mean, saved_var]
//   After  (BN-7): BN(...)                     -> Y, mean, var, saved_mean, saved_var
//
// Preconditions: an inference node's outputs after Y are unused (BN-7 with
// more than one output is training). A training node gets the outputs it
// lacks under new names, unused: BN-7's training form has all five.
// Formula: unchanged (inference: running statistics; training: batch
// statistics, running statistics updated with `momentum`).
// Down: inference (one output) -> is_test = 1; training -> is_test = 0.
#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

struct Plan {
  bool training = false;
  std::optional<int64_t> is_test;
};

Plan match_up(const NormSite& s) {
  const NormNode n = s.read();
  return {n.training, n.is_test};
}

}  // namespace

void bn_6_7_up(NormSite& s) {
  const Plan p = match_up(s);
  if (remove_attr(s.node, "is_test")) s.report.dropped.push_back(fmt::format("is_test = {}", *p.is_test));
  if (p.training) {
    const int had = s.read().outputs;
    pad_outputs(s, 5);
    if (had < 5) s.report.set.push_back(fmt::format("outputs {} -> 5 (the training form)", had));
  } else {
    trim_outputs(s, 1, "BatchNormalization-7 in inference");
  }
}

void bn_6_7_down(NormSite& s) {
  const NormNode n = s.read();
  set_int(s.node, "is_test", n.training ? 0 : 1);
  s.report.set.push_back(fmt::format("is_test = {}", n.training ? 0 : 1));
}

const Step bn_6_7{"bn_6_7", "bn_6_7", bn_6_7_up, bn_6_7_down};

}  // namespace bnorm::steps
