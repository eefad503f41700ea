// Activation ops: Relu, LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid,
// HardSwish, Tanh, Softplus, Softsign, ThresholdedRelu, Clip.
//
// Contract: Y has X's shape and type. Floating types compute in float
// (double for double) with the kernels' activation (kernels/activation.h),
// the definition a fused normalization uses too; integer inputs (Relu 14, Clip 12) compute in
// double and must stay integral. Attribute defaults are the same at every
// version (float values, as ONNX attributes are float). Clip below 11 takes
// min/max attributes, from 11 optional scalar inputs (absent: unbounded).
#include <limits>

#include "eval/ops/activation/activation.h"
#include "model/attrs.h"
#include "eval/ops/nn/norm/norm_compute.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/activation/ops.h"

namespace bnorm::eval {

namespace {

using kernels::ActivationKind;

struct ActSpec {
  const char* op;
  Activation defaults;
  const char* alpha_attr;  // the attribute read into alpha, or nullptr
  const char* beta_attr;   // ... into beta
};

const ActSpec kActs[] = {
    {"Relu", Activation::relu(), nullptr, nullptr},
    {"LeakyRelu", Activation::leaky_relu(), "alpha", nullptr},
    {"Elu", Activation::elu(), "alpha", nullptr},
    {"Selu", Activation::selu(), "alpha", "gamma"},
    {"Celu", Activation::celu(), "alpha", nullptr},
    {"Sigmoid", Activation::sigmoid(), nullptr, nullptr},
    {"HardSigmoid", Activation::hard_sigmoid(), "alpha", "beta"},
    {"HardSwish", Activation::hard_swish(), nullptr, nullptr},
    {"Tanh", Activation::tanh(), nullptr, nullptr},
    {"Softplus", Activation::softplus(), nullptr, nullptr},
    {"Softsign", Activation::softsign(), nullptr, nullptr},
    {"ThresholdedRelu", Activation::thresholded_relu(), "alpha", nullptr},
    {"Clip", Activation::clip(), nullptr, nullptr},
};

const ActSpec* find_spec(const std::string& op) {
  for (const auto& s : kActs) {
    if (op == s.op) return &s;
  }
  return nullptr;
}

double scalar_input(const Tensor* t, const char* what, double fallback) {
  if (!t) return fallback;
  if (t->numel() != 1) fail(ErrorKind::input, "input '{}' must be a scalar, has shape {}", what, shape_str(t->dims));
  return t->to_f64()[0];
}

}  // namespace

bool is_activation_op(const std::string& op_type) { return find_spec(op_type) != nullptr; }

Activation read_activation(const onnx::NodeProto& node, int version, const std::vector<const Tensor*>& inputs) {
  const ActSpec* spec = find_spec(node.op_type());
  if (!spec) fail(ErrorKind::unsupported, "op '{}' is not an activation", node.op_type());
  Activation a = spec->defaults;
  if (a.kind == ActivationKind::Clip) {
    if (version < 11) {
      a.alpha = attr_float(node, "min", std::numeric_limits<float>::lowest());
      a.beta = attr_float(node, "max", std::numeric_limits<float>::max());
    } else {
      a.alpha = scalar_input(inputs.size() > 1 ? inputs[1] : nullptr, "min", a.alpha);
      a.beta = scalar_input(inputs.size() > 2 ? inputs[2] : nullptr, "max", a.beta);
    }
    return a;
  }
  if (spec->alpha_attr) a.alpha = attr_float(node, spec->alpha_attr, static_cast<float>(a.alpha));
  if (spec->beta_attr) a.beta = attr_float(node, spec->beta_attr, static_cast<float>(a.beta));
  return a;
}

Tensors op_activation(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Activation act = read_activation(*ctx.node, ctx.version, ctx.inputs);
  Tensors out(1);
  if (!is_floating(x.dtype)) {
    std::vector<double> v = x.to_f64();
    for (double& e : v) e = apply(act, e);
    out[0] = Tensor::from_f64(x.dtype, x.dims, v);
    return out;
  }
  // X itself when it dies here, else a copy, then in place.
  const DType t = x.dtype;
  const auto n = static_cast<size_t>(x.numel());
  out[0] = ctx.input_or_copy(0);  // x is not used past this line
  activation_in_place(t, out[0].bytes.data(), n, act);
  return out;
}

}  // namespace bnorm::eval
