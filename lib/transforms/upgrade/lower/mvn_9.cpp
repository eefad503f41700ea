// MeanVarianceNormalization-9 and -13 below opset 9: the function body of
// MeanVarianceNormalization, (X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9).
//
//   Before: Y = MeanVarianceNormalization(X)  axes (default [0, 2, 3])
//   After:  Mean = ReduceMean(X, axes);  D = Sub(X, Mean)
//           Var  = ReduceMean(Mul(D, D), axes)
//           Y    = Div(D, Add(Sqrt(Var), 1e-9))
//
// The function body adds its epsilon 1e-9 to the standard deviation (an
// initializer of X's type here). It computes the variance as
// E[X^2] - E[X]^2, which can cancel to a negative number and give NaN; the
// lowering computes the quantity that formula means, E[(X - E[X])^2], as
// bnorm's evaluator does (docs/semantics.md). Negative axes are made
// non-negative with X's rank (ReduceMean has none below 11). Preconditions
// (each an Error naming the node): X's element type known; X's rank known
// when an axis is negative and the target is below 11; a target of opset 7
// or later.
#include <fmt/format.h>

#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_mvn_9(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_broadcasting(s);
  const DType t = known_type(s, n.input(0), "input X");
  std::vector<int64_t> axes{0, 2, 3};
  if (const auto* a = find_attr(n, "axes")) axes.assign(a->ints().begin(), a->ints().end());
  axes = axes_at_target(s, axes);

  Lowering l{s, opset};
  const std::string mean = l.reduce_mean(n.input(0), axes, "mean");
  const std::string d = l.add("Sub", {n.input(0), mean}, "centered");
  const std::string var = l.reduce_mean(l.add("Mul", {d, d}, "squared"), axes, "var");
  const std::string stddev = l.add("Sqrt", {var}, "stddev");
  const std::string denom = l.add("Add", {stddev, l.scalar(t, 1e-9, "epsilon")}, "stddev_eps");
  l.add("Div", {d, denom}, "y", n.output(0));
}

}  // namespace bnorm::steps
