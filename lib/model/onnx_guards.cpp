#include "model/onnx_guards.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>
#include <set>
#include <string>

namespace bnorm {

namespace {

int rank_of(onnx::InferenceContext& ctx, size_t i) {
  if (ctx.getNumInputs() <= i) return -1;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

// Before: ONNX's inference divides by strides and indexes X's shape by W's.
// After: those inputs fail as InferenceError; all others reach ONNX's code.
void check_conv_pool(onnx::InferenceContext& ctx, int w_index) {
  if (const onnx::AttributeProto* a = ctx.getAttribute("strides")) {
    for (const int64_t s : a->ints()) {
      if (s <= 0) fail_shape_inference("strides must be positive, got ", s);
    }
  }
  if (w_index < 0) return;
  const int rx = rank_of(ctx, 0), rw = rank_of(ctx, static_cast<size_t>(w_index));
  if (rw >= 0 && rw < 2) fail_shape_inference("W has rank ", rw, "; it must have the rank of X, at least 3");
  if (rx >= 0 && rw >= 0 && rx != rw) fail_shape_inference("X has rank ", rx, " and W rank ", rw, "; they must be the same");
}

void wrap_every_version(const std::string& op, int w_index) {
  std::set<const onnx::OpSchema*> seen;
  for (int v = 1; v <= onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
       ++v) {
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, v, onnx::ONNX_DOMAIN);
    if (s == nullptr || !seen.insert(s).second) continue;
    onnx::InferenceFunction inner = s->GetTypeAndShapeInferenceFunction();
    if (!inner) continue;
    // The registry owns its schemas as non-const objects; it hands out const
    // pointers only. Replacing the function is done once, before any use.
    const_cast<onnx::OpSchema*>(s)->TypeAndShapeInferenceFunction(
        [inner, w_index](onnx::InferenceContext& ctx) {
          check_conv_pool(ctx, w_index);
          inner(ctx);
        });
  }
}

}  // namespace

void install_onnx_inference_guards() {
  static std::once_flag once;
  std::call_once(once, [] {
    wrap_every_version("Conv", 1);
    wrap_every_version("ConvTranspose", 1);
    wrap_every_version("ConvInteger", 1);
    wrap_every_version("QLinearConv", 3);
    for (const char* pool : {"MaxPool", "AveragePool", "LpPool"}) wrap_every_version(pool, -1);
  });
}

}  // namespace bnorm
