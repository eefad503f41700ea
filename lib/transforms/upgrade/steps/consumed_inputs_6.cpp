// Clip, Max, Mean, Min, Sum 1 -> 6: `consumed_inputs` removed, for the ops
// bnorm converts itself further up (clip_11, variadic_8), so ONNX's 1 -> 6
// adapter, which drops it for the other opset-1 ops, never sees them.
//
//   Before (Clip-1): Clip(X) consumed_inputs=[0] min max
//   After  (Clip-6): Clip(X)                     min max
//
// Preconditions: the node carries `consumed_inputs` and crosses 6 going up.
// Formula: unchanged (the attribute was an in-place hint for Caffe2/Torch,
// with no effect on the values). Down: nothing to do; `consumed_inputs` is
// optional at version 1 and is not added.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void consumed_inputs_6_up(NormSite& s) { drop_consumed_inputs(s); }

void consumed_inputs_6_down(NormSite&) {}

bool consumed_inputs_6_applies(const onnx::NodeProto& n, int64_t from, int64_t to) {
  if (!(from < 6 && to >= 6)) return false;
  for (const auto& a : n.attribute())
    if (a.name() == "consumed_inputs") return true;
  return false;
}

}  // namespace

const Step consumed_inputs_6{"consumed_inputs_6", "consumed_inputs_6", consumed_inputs_6_up, consumed_inputs_6_down,
                             consumed_inputs_6_applies};

}  // namespace bnorm::steps
