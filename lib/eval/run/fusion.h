// Whether a Conv (Gemm, MatMul) can absorb, when its turn comes, what the
// plan says may follow it (plan.h: norm_after, add_after, fused_with,
// silu_*): the executor (evaluator.cpp) asks with the node's inputs in
// hand (Epilogue); where a check says no, the node after runs as a node of
// its own and reports its own errors.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include <vector>

#include "eval/ops/activation/activation.h"
#include "eval/run/op.h"
#include "eval/run/plan.h"
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

// What node i of `g` applies after its product in this run, of what plan
// `p` says may follow it (norm_after, add_after and add_act, fused_with,
// silu_sigmoid and silu_mul): each part only when the checks above pass
// and its inputs are in hand now. choose() points ctx's norm_after,
// residual and fused at this object's members: it must outlive the op.
struct Epilogue {
  int bn = -1;    // the BatchNormalization applied
  int add = -1;   // the residual Add offered (the op says in residual_added whether it added it)
  int act = -1;   // the activation node planned after the last of those (applied when ctx.fused)
  int silu = -1;  // the Mul of a SiLU written out, applied
  OpContext::NormAfter norm{};
  Activation activation;
  bool residual_added = false;

  void choose(const onnx::GraphProto& g, const Plan& p, int i, int64_t opset, const Env& env, OpContext& ctx);
  // Once the op ran: the node whose output 0 the op's output 0 is, and the
  // nodes it absorbed (marked run by the executor).
  int last(int i, const OpContext& ctx) const;
  std::vector<int> absorbed(const Plan& p, int i, const OpContext& ctx) const;
};

}  // namespace bnorm::eval
