// Loop 1 <-> 11: loop-carried values became optional.
//
//   Loop-1:  Loop(M, cond, v_initial...)   one loop-carried value at least
//   Loop-11: Loop(M, cond, v_initial...?)  none allowed
//
// A `types` row: a Loop with a loop-carried value crosses it unchanged (the
// ONNX phase keeps it, onnx_converter.cpp). This step matches only a Loop
// without one going below 11 and refuses it, naming the node: Loop-1 has
// no form for it. Up: nothing (never matched).
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void keep(NormSite&) {}

void down(NormSite& s) {
  refuse(s, "a Loop without loop-carried values has no form below version 11 (Loop-1 needs one)");
}

bool loop_11_applies(const onnx::NodeProto& n, int64_t from, int64_t to) {
  return to < 11 && from >= 11 && n.input_size() < 3;
}

}  // namespace

const Step loop_11{"loop_11", "loop_11", keep, down, loop_11_applies};

}  // namespace bnorm::steps
