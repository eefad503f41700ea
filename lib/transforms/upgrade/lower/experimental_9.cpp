// The experimental ops of opsets 1 to 9 going up past 9, where ONNX removed
// them (ONNX 1.5): each is written as the default-domain ops that compute
// it, at the model's opset, and the rest of the conversion moves those up.
// Their definitions are the evaluator's (lib/eval/ops/experimental/experimental.cpp,
// docs/semantics.md), from ONNX <= 1.4's experimental schemas.
//
//   Before: Y = ImageScaler(X)  scale s (1), bias b[C] (none)   X [N, C, H, W]
//   After:  Y = Add(Mul(X, s), B)  B = b as [1, C, 1, 1]; no Mul when s = 1,
//           no Add without bias
//   Before: Y = Affine(X)  alpha (1), beta (0)        After: Y = Add(Mul(X, alpha), beta)
//   Before: Y = Scale(X)  scale (1)                    After: Y = Mul(X, scale)
//   Before: Y = ScaledTanh(X)  alpha, beta             After: Y = Mul(Tanh(Mul(X, beta)), alpha)
//   Before: Y = ParametricSoftplus(X)  alpha, beta     After: Y = Mul(Softplus(Mul(X, beta)), alpha)
//   Before: Y = Crop(X)  border (left, top, right, bottom), scale (height, width)
//   After:  Y = Slice(X) over axes [2, 3]: starts [top, left], ends
//           [top + height, left + width] with scale, else [-bottom, -right]
//           (a border of 0: to the end)
//
// Factors of 1 and terms of 0 are left out, so those nodes are exact; the
// others round after each op where the evaluator's experimental op rounds
// once (float64 inside): within one unit in the last place per op.
// Below opset 7 the Mul and Add carry the legacy broadcast attributes
// (broadcast = 1, and axis = 1 for ImageScaler's [C] bias).
// Preconditions (each an Error naming the node): X's element type known
// (the constants take it); ScaledTanh and ParametricSoftplus have alpha
// and beta (their schemas give no default, the evaluator refuses them too);
// Crop has 4 borders, and 2 scales or none.
#include <fmt/format.h>

#include <limits>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {


float required_float(const NormSite& s, const std::string& name) {
  const auto* a = find_attr(s.node, name);
  if (!a) refuse(s, fmt::format("attribute '{}' is missing (the experimental schema gives it no default)", name));
  return a->f();
}

// op(x, c) at the model's opset: the legacy broadcast attributes below 7.
std::string binary(Lowering& l, const std::string& op, const std::string& x, const std::string& c,
                   const std::string& what, const std::string& out, bool channel_axis = false) {
  const std::string o = l.add(op, {x, c}, what, out);
  if (l.opset < 7) {
    set_int(l.s.before.back(), "broadcast", 1);
    if (channel_axis) set_int(l.s.before.back(), "axis", 1);
  }
  return o;
}

// y = x * mul + add, leaving out a factor of 1 and a term of 0; the last op
// writes `out`. With neither, an Identity.
void scale_shift(Lowering& l, const std::string& x, DType t, double mul, double add, const std::string& out) {
  std::string v = x;
  if (mul != 1) v = binary(l, "Mul", v, l.scalar(t, mul, "scale"), "scaled", add != 0 ? "" : out);
  if (add != 0) v = binary(l, "Add", v, l.scalar(t, add, "shift"), "shifted", out);
  if (v == x) l.add("Identity", {x}, "y", out);
}

}  // namespace

void lower_experimental_9(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  const std::string op = n.op_type();
  Lowering l{s, opset};
  const std::string& x = n.input(0);
  const std::string& y = n.output(0);
  if (op == "Crop") {
    const auto* border = find_attr(n, "border");
    const auto* scale = find_attr(n, "scale");
    if (!border || border->ints_size() != 4) refuse(s, "attribute 'border' must have 4 values (left, top, right, bottom)");
    if (scale && scale->ints_size() != 2) refuse(s, "attribute 'scale' must have 2 values (height, width)");
    const int64_t left = border->ints(0), top = border->ints(1), right = border->ints(2), bottom = border->ints(3);
    const int64_t to_end = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> starts{top, left}, ends;
    if (scale) ends = {top + scale->ints(0), left + scale->ints(1)};
    else ends = {bottom > 0 ? -bottom : to_end, right > 0 ? -right : to_end};
    // Slice takes its starts/ends as attributes before opset 10.
    onnx::NodeProto& slice = s.add_before("Slice", {x}, {y});
    set_ints(slice, "starts", starts);
    set_ints(slice, "ends", ends);
    set_ints(slice, "axes", {2, 3});
    return;
  }
  const DType t = known_type(s, x, "input X");
  if (op == "ImageScaler") {
    const float scale = attr_float(n, "scale", 1.0f);
    const auto* bias = find_attr(n, "bias");
    std::string v = x;
    const bool has_bias = bias && bias->floats_size() > 0;
    if (scale != 1) v = binary(l, "Mul", v, l.scalar(t, scale, "scale"), "scaled", has_bias ? "" : y);
    if (has_bias) {
      const auto c = static_cast<int64_t>(bias->floats_size());
      Tensor b = Tensor::from_f64(t, opset < 7 ? std::vector<int64_t>{c} : std::vector<int64_t>{1, c, 1, 1},
                                  std::vector<double>(bias->floats().begin(), bias->floats().end()));
      b.name = l.value("bias");
      s.initializers.push_back(to_proto(b));
      v = binary(l, "Add", v, b.name, "biased", y, true);
    }
    if (v == x) l.add("Identity", {x}, "y", y);
  } else if (op == "Affine") {
    scale_shift(l, x, t, attr_float(n, "alpha", 1.0f), attr_float(n, "beta", 0.0f), y);
  } else if (op == "Scale") {
    scale_shift(l, x, t, attr_float(n, "scale", 1.0f), 0.0, y);
  } else if (op == "ScaledTanh" || op == "ParametricSoftplus") {
    const float alpha = required_float(s, "alpha"), beta = required_float(s, "beta");
    std::string v = x;
    if (beta != 1) v = binary(l, "Mul", v, l.scalar(t, beta, "beta"), "inner", "");
    v = l.add(op == "ScaledTanh" ? "Tanh" : "Softplus", {v}, op == "ScaledTanh" ? "tanh" : "softplus",
              alpha != 1 ? "" : y);
    if (alpha != 1) binary(l, "Mul", v, l.scalar(t, alpha, "alpha"), "y", y);
  } else {
    refuse(s, fmt::format("bnorm has no lowering for the experimental op '{}'", op));
  }
}

}  // namespace bnorm::steps
