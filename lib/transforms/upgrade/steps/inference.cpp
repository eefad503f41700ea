// --inference: the user declares the model an inference model.
//
//   Before: BN-6 is_test=0 (or absent)   -> Y [, mean, var, saved_mean, saved_var]
//   After:  BN-6 is_test=1               -> Y
//   (BN 7..13: the outputs after Y are removed; BN 14/15: training_mode removed.)
//
// Preconditions: the removed outputs are unused (else Error naming the node
// and the output). Formula: Y = scale * (X - mean) / sqrt(var + epsilon) + B
// with the running statistics `mean` and `var`, instead of the batch's.
// Applied at the node's own version, before any step.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

bool make_inference(NormSite& s) {
  const NormNode n = s.read();
  if (n.kind != NormKind::batch_norm || !n.training) return false;
  if (n.version < 7) {
    set_int(s.node, "is_test", 1);
    s.report.set.push_back("is_test = 1 (--inference)");
  } else if (n.version >= 14) {
    remove_attr(s.node, "training_mode");
    s.report.dropped.push_back("training_mode = 1 (--inference)");
  }
  trim_outputs(s, 1, "--inference");
  s.report.made_inference = true;
  return true;
}

}  // namespace bnorm::steps
