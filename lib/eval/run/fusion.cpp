// The run-time checks of fusion.h.
#include "eval/run/fusion.h"

#include <vector>

#include "core/error.h"
#include "model/norm_op.h"
#include "model/op_versions.h"

namespace bnorm::eval {

bool exact_epilogue(const OpContext& ctx) {
  const Tensor* x = ctx.input(0);
  return x && (x->dtype == DType::float32 || x->dtype == DType::float64);
}

bool norm_after_ready(const onnx::NodeProto& bn, int64_t opset, const Env& env, const OpContext& ctx,
                      OpContext::NormAfter& na) {
  const Tensor* w = ctx.input(1);
  if (!exact_epilogue(ctx) || !w || w->dims.empty() || bn.input_size() != 5) return false;
  for (int k = 1; k < bn.output_size(); ++k) {
    if (!bn.output(k).empty()) return false;
  }
  NormNode nn;
  const Tensor* params[4];
  try {
    nn = read_norm_node(bn, opset);
    for (int k = 0; k < 4; ++k) params[k] = bn.input(k + 1).empty() ? nullptr : env.find_tensor(bn.input(k + 1));
  } catch (const Error&) {
    return false;  // the BatchNormalization node says why when it runs
  }
  if (nn.training || !(nn.spatial || nn.version >= 9)) return false;
  for (const Tensor* t : params) {
    if (!t || !is_floating(t->dtype) || t->dims != std::vector<int64_t>{w->dims[0]}) return false;
    if (t->dtype == DType::bfloat16 && nn.version < 14) return false;
  }
  na = {params[0], params[1], params[2], params[3], nn.epsilon};
  return true;
}

const Tensor* residual_operand(const onnx::NodeProto& add, const std::string& y, const Env& env) {
  const std::string& other = add.input(0) == y ? add.input(1) : add.input(0);
  if (other.empty()) return nullptr;
  try {
    return env.find_tensor(other);
  } catch (const Error&) {
    return nullptr;  // the Add says why when it runs
  }
}

void Epilogue::choose(const onnx::GraphProto& g, const Plan& p, int i, int64_t opset, const Env& env, OpContext& ctx) {
  const auto& n = g.node(i);
  // A Conv applies the BatchNormalization after it when that would run
  // in inference mode on what the Conv makes (else each runs alone).
  bn = p.norm_after.empty() ? -1 : p.norm_after[i];
  if (bn >= 0 && !norm_after_ready(g.node(bn), opset, env, ctx, norm)) bn = -1;
  if (bn >= 0) ctx.norm_after = &norm;
  // A product of float16 or bfloat16 would activate before its rounding:
  // it runs alone (norm_after_ready already asks for float or double).
  const bool product = n.op_type() == "Conv" || n.op_type() == "Gemm" || n.op_type() == "MatMul";
  const bool rounds_apart = product && !exact_epilogue(ctx);
  // A residual Add after the Conv (or after the BatchNormalization it
  // applies), when its other operand exists now; the op adds it when it
  // has the output's type and shape (residual_added), else the Add runs
  // as a node of its own, and so does its activation.
  const int planned_add = p.add_after.empty() ? -1 : p.add_after[i];
  if (planned_add >= 0 && !rounds_apart && (bn >= 0 || p.norm_after[i] < 0)) {
    if (const Tensor* r = residual_operand(g.node(planned_add), g.node(bn >= 0 ? bn : i).output(0), env)) {
      add = planned_add;
      ctx.residual = r;
      ctx.residual_added = &residual_added;
    }
  }
  act = add >= 0 ? p.add_act[i] : bn >= 0 ? p.fused_with[bn] : rounds_apart ? -1 : p.fused_with[i];
  // Or a SiLU written out (Sigmoid, Mul) after the product or the
  // BatchNormalization it applies.
  if (act < 0 && add < 0 && !rounds_apart && !p.silu_mul.empty() && p.silu_mul[i] >= 0 &&
      (bn >= 0) == (p.norm_after[i] >= 0)) {
    silu = p.silu_mul[i];
    activation = Activation::silu();
    ctx.fused = &activation;
  }
  if (act < 0) return;
  // Fuse only when the activation's other inputs (Clip's bounds) exist now.
  const auto& a = g.node(act);
  std::vector<const Tensor*> a_inputs{nullptr};
  for (int k = 1; k < a.input_size(); ++k) {
    const Tensor* t = a.input(k).empty() ? nullptr : env.find_tensor(a.input(k));
    if (!a.input(k).empty() && !t) return;
    a_inputs.push_back(t);
  }
  activation = read_activation(a, resolve_op(a.op_type(), opset).version, a_inputs);
  ctx.fused = &activation;
}

int Epilogue::last(int i, const OpContext& ctx) const {
  if (add >= 0) return residual_added ? (ctx.fused ? act : add) : ctx.norm_after ? bn : i;
  if (silu >= 0) return silu;
  if (ctx.fused) return act;
  return ctx.norm_after ? bn : i;
}

std::vector<int> Epilogue::absorbed(const Plan& p, int i, const OpContext& ctx) const {
  std::vector<int> out;
  if (ctx.norm_after) out.push_back(bn);
  if (add >= 0 && residual_added) out.push_back(add);
  if (silu >= 0) {
    out.push_back(p.silu_sigmoid[i]);
    out.push_back(silu);
  } else if (ctx.fused && (add < 0 || residual_added)) {
    out.push_back(act);
  }
  return out;
}

}  // namespace bnorm::eval
