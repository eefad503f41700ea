// The run-time checks of fusion.h.
#include "eval/run/fusion.h"

#include <vector>

#include "core/error.h"
#include "model/norm_op.h"

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

}  // namespace bnorm::eval
