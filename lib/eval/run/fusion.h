// Whether a Conv can absorb, when its turn comes, what the plan says may
// follow it (plan.h: norm_after, add_after, fused_with): the executor
// (evaluator.cpp) asks these with the Conv's inputs in hand; where one says
// no, the node after runs as a node of its own and reports its own errors.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "eval/run/op.h"
#include "eval/run/scope.h"

namespace bnorm::eval {

// The Conv of `ctx` computes in float or double: only then are the nodes
// after it applied before its one rounding to its type.
bool exact_epilogue(const OpContext& ctx);

// BatchNormalization node `bn` would run in inference mode on what the Conv
// of `ctx` makes (spatial, parameters [M] of a floating type its version
// has, no other output wanted): then `na` holds its parameters.
bool norm_after_ready(const onnx::NodeProto& bn, int64_t opset, const Env& env, const OpContext& ctx,
                      OpContext::NormAfter& na);

// The other operand of residual Add `add`, whose operand `y` the Conv makes,
// when it has a value now; else nullptr.
const Tensor* residual_operand(const onnx::NodeProto& add, const std::string& y, const Env& env);

}  // namespace bnorm::eval
