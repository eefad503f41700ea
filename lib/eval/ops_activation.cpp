// Activation ops: Relu, LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid,
// HardSwish, Tanh, Softplus, Softsign, ThresholdedRelu, Clip.
//
// Contract: Y has X's shape and type. Floating types compute in float
// (double for double) through apply() in activation.h, the same function a
// fused normalization uses; integer inputs (Relu 14, Clip 12) compute in
// double and must stay integral. Clip below 11 takes min/max attributes,
// from 11 optional inputs (absent: unbounded).
#include <limits>

#include "eval/activation.h"
#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/op.h"
#include "eval/ops.h"

namespace bnorm::eval {

namespace {

struct ActSpec {
  const char* op;
  ActKind kind;
  double alpha, beta;
};

// Defaults of every version (they did not change across versions).
constexpr ActSpec kActs[] = {
    {"Relu", ActKind::relu, 0, 0},
    {"LeakyRelu", ActKind::leaky_relu, 0.01, 0},
    {"Elu", ActKind::elu, 1.0, 0},
    {"Selu", ActKind::selu, 1.67326319217681884765625, 1.05070102214813232421875},
    {"Celu", ActKind::celu, 1.0, 0},
    {"Sigmoid", ActKind::sigmoid, 0, 0},
    {"HardSigmoid", ActKind::hard_sigmoid, 0.2, 0.5},
    {"HardSwish", ActKind::hard_swish, 0, 0},
    {"Tanh", ActKind::tanh, 0, 0},
    {"Softplus", ActKind::softplus, 0, 0},
    {"Softsign", ActKind::softsign, 0, 0},
    {"ThresholdedRelu", ActKind::thresholded_relu, 1.0, 0},
    {"Clip", ActKind::clip, 0, 0},
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
  Activation a;
  a.kind = spec->kind;
  if (a.kind == ActKind::clip) {
    const double inf = std::numeric_limits<double>::infinity();
    if (version < 11) {
      a.alpha = attr_float(node, "min", -std::numeric_limits<float>::max());
      a.beta = attr_float(node, "max", std::numeric_limits<float>::max());
    } else {
      a.alpha = scalar_input(inputs.size() > 1 ? inputs[1] : nullptr, "min", -inf);
      a.beta = scalar_input(inputs.size() > 2 ? inputs[2] : nullptr, "max", inf);
    }
    return a;
  }
  // Attributes are floats; double(float) keeps the value the node holds.
  a.alpha = find_attr(node, "alpha") ? attr_float(node, "alpha", 0) : spec->alpha;
  if (a.kind == ActKind::selu) {
    a.gamma = find_attr(node, "gamma") ? attr_float(node, "gamma", 0) : spec->beta;
    if (!find_attr(node, "alpha")) a.alpha = static_cast<float>(spec->alpha);
    if (!find_attr(node, "gamma")) a.gamma = static_cast<float>(spec->beta);
  } else {
    a.beta = find_attr(node, "beta") ? attr_float(node, "beta", 0) : spec->beta;
  }
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
  with_float_type(x.dtype, "X", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v = load_values<T>(x);
    for (T& e : v) e = apply(act, e);
    out[0] = make_tensor(x.dtype, x.dims, v);
    return 0;
  });
  return out;
}

}  // namespace bnorm::eval
