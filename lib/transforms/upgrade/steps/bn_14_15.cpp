// BatchNormalization 14 <-> 15: the types of scale/B (T1) and mean/var (T2)
// split from X's (T).
//
//   Up:   BN-14(X: T, scale: T, B: T, mean: U, var: U)  ->  BN-15 with T1 = T, T2 = U. Nothing to change.
//   Down: BN-15(X: T, scale: T1, B: T1, mean: T2, var: T2), T1 != T
//         -> Cast X, scale, B to the widest of T and T1; BN-14; Cast Y back to T (types.cpp).
//
// Preconditions: none (float16, float, double and bfloat16 exist at both).
// Formula: unchanged; every cast widens, so no input is rounded.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

void bn_14_15_up(NormSite&) {}

void bn_14_15_down(NormSite& s) { unify_types(s, {{0, 1, 2}, {3, 4}}); }

const Step bn_14_15{"bn_14_15", "bn_14_15", bn_14_15_up, bn_14_15_down};

}  // namespace bnorm::steps
