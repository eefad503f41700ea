// Gelu-20 below opset 20: the function body of Gelu.
//
//   Before: Y = Gelu(X)  approximate = "none" (default) | "tanh"
//   After, none: Y = Mul(Mul(X, Add(Erf(Div(X, sqrt(2))), 1)), 0.5)
//               = 0.5 * X * (1 + erf(X / sqrt(2)))
//   After, tanh: Y = 0.5 * X * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 * X^3)))
//               with X^3 = Mul(Mul(X, X), X)
//
// The constants are scalar initializers of X's type. Preconditions (each an
// Error naming the node): X's element type known; approximate "none" or
// "tanh"; a target of opset 7 or later (broadcasting), 9 or later for
// "none" (Erf).
#include <fmt/format.h>

#include <cmath>

#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_gelu_20(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  const auto* a = find_attr(n, "approximate");
  const std::string approximate = a ? a->s() : "none";
  if (approximate != "none" && approximate != "tanh") {
    refuse(s, fmt::format("approximate = '{}' is neither 'none' nor 'tanh'", approximate));
  }
  require_broadcasting(s);
  if (approximate == "none") require_op(s, "Erf", 9);
  const DType t = known_type(s, n.input(0), "input X");
  Lowering l{s, opset};
  const std::string& x = n.input(0);
  std::string inner;
  if (approximate == "none") {
    const std::string scaled = l.add("Div", {x, l.scalar(t, std::sqrt(2.0), "sqrt2")}, "scaled");
    inner = l.add("Erf", {scaled}, "erf");
  } else {
    const std::string cube = l.add("Mul", {l.add("Mul", {x, x}, "square"), x}, "cube");
    const std::string poly = l.add("Add", {x, l.add("Mul", {cube, l.scalar(t, 0.044715, "c")}, "cube_scaled")}, "poly");
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    inner = l.add("Tanh", {l.add("Mul", {poly, l.scalar(t, k, "sqrt_2_pi")}, "tanh_in")}, "tanh");
  }
  const std::string one_plus = l.add("Add", {inner, l.scalar(t, 1.0, "one")}, "one_plus");
  const std::string times_x = l.add("Mul", {x, one_plus}, "times_x");
  l.add("Mul", {times_x, l.scalar(t, 0.5, "half")}, "y", n.output(0));
}

}  // namespace bnorm::steps
