// Swish-24 below opset 24 and SwiGLU-28 below opset 28: their formulas
// (Operators.md), x * Sigmoid(alpha * x) and Swish_alpha(A) * B.
//
//   Before: Y = Swish(X)                 alpha (float, default 1.0)
//   After:  Y = Mul(X, Sigmoid(Mul(X, alpha)))          (no inner Mul when alpha = 1)
//   Before: Y = SwiGLU(A, B)             alpha (float, default 1.0)
//   After:  Y = Mul(Mul(A, Sigmoid(Mul(A, alpha))), B)  (no inner Mul when alpha = 1)
//   float16, bfloat16: the same in float between Casts:
//           Y = Cast(Mul(Xf, Sigmoid(Mul(Xf, alpha))), T)  with Xf = Cast(X, float) (A and B both cast)
//
// alpha is a scalar initializer of the compute type holding the attribute's
// float value. Exact, bit for bit, against bnorm's evaluator of Swish and
// SwiGLU (docs/semantics.md): they compute in float (float16 and bfloat16
// widened) or double, rounding alpha * x, the Sigmoid (the Sigmoid op's own
// kernel) and each product to that type, and float16/bfloat16 once at the
// end, which the Casts reproduce; x * 1 is x, so alpha = 1 needs no Mul.
// SwiGLU does not broadcast and Mul does: inputs of different shapes are
// already invalid (eval refuses them) and are refused here when both shapes
// are known (a dim unknown in either is not compared). Preconditions (each an Error naming the node): X's (A's, B's)
// element type known and floating; a target of opset 7 or later
// (broadcasting the scalar alpha).
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {

// The compute type of an element type `t`: float for float16 and bfloat16.
DType compute_type(const NormSite& s, DType t) {
  if (t == DType::float16 || t == DType::bfloat16) return DType::float32;
  if (t == DType::float32 || t == DType::float64) return t;
  refuse(s, fmt::format("{} takes floating types; its input is {}", s.node.op_type(), dtype_name(t)));
}

// x * Sigmoid(alpha * x), in `u`, for an input already of type `u`.
std::string swish(Lowering& l, const std::string& x, DType u, float alpha) {
  const std::string scaled = alpha == 1.0f ? x : l.add("Mul", {x, l.scalar(u, alpha, "alpha")}, "scaled");
  return l.add("Mul", {x, l.add("Sigmoid", {scaled}, "sigmoid")}, "swish");
}

}  // namespace

void lower_swish_24(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_broadcasting(s);
  const DType t = known_type(s, n.input(0), "input X");
  const DType u = compute_type(s, t);
  const float alpha = attr_float(n, "alpha", 1.0f);
  Lowering l{s, opset};
  const std::string y = swish(l, l.cast(n.input(0), t, u, "x_float"), u, alpha);
  // The last node writes the output: the Cast back, or the product renamed.
  if (u != t) {
    l.cast(y, u, t, "y", n.output(0));
  } else {
    s.before.back().set_output(0, n.output(0));
  }
}

void lower_swiglu_28(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_broadcasting(s);
  const DType t = known_type(s, n.input(0), "input A");
  const DType tb = known_type(s, n.input(1), "input B");
  if (tb != t) refuse(s, fmt::format("A is {} and B {}: SwiGLU takes one type", dtype_name(t), dtype_name(tb)));
  const auto sa = s.dims_of(n.input(0)), sb = s.dims_of(n.input(1));
  bool differ = sa && sb && sa->size() != sb->size();
  for (size_t i = 0; sa && sb && !differ && i < sa->size(); ++i) differ = (*sa)[i] >= 0 && (*sb)[i] >= 0 && (*sa)[i] != (*sb)[i];
  if (differ) {
    refuse(s, "A and B have different shapes: SwiGLU does not broadcast, and the Mul it would be written as does");
  }
  const DType u = compute_type(s, t);
  const float alpha = attr_float(n, "alpha", 1.0f);
  Lowering l{s, opset};
  const std::string gate = swish(l, l.cast(n.input(0), t, u, "a_float"), u, alpha);
  const std::string b = l.cast(n.input(1), t, u, "b_float");
  if (u != t) {
    l.cast(l.add("Mul", {gate, b}, "y_float"), u, t, "y", n.output(0));
  } else {
    l.add("Mul", {gate, b}, "y", n.output(0));
  }
}

}  // namespace bnorm::steps
