// InstanceNormalization 1 <-> 6: `consumed_inputs` removed.
//
//   Before (IN-1): IN(X, scale, B) consumed_inputs=[0,0,0] epsilon
//   After  (IN-6): IN(X, scale, B)                         epsilon
//
// Preconditions: none. Formula: unchanged,
//   Y = scale * (X - mean_nc) / sqrt(var_nc + epsilon) + B
// with mean and variance per instance and channel, at both versions.
// Down: nothing to do; `consumed_inputs` is optional at IN-1 and is not added.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

void in_1_6_up(NormSite& s) { drop_consumed_inputs(s); }

void in_1_6_down(NormSite&) {}

const Step in_1_6{"in_1_6", "in_1_6", in_1_6_up, in_1_6_down};

}  // namespace bnorm::steps
