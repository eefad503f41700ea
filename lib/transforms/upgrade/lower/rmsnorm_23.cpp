// RMSNormalization-23 below opset 23: the function body of RMSNormalization.
//
//   Before: Y = RMSNormalization(X, scale)  axis epsilon stash_type
//   After:  Xu         = Cast(X, U)                  (U = stash_type; no Cast when X is U already)
//           RMS        = Sqrt(Add(ReduceMean(Mul(Xu, Xu), axes), epsilon))   axes = [axis, rank), keepdims 1
//           Normalized = Div(Xu, RMS)
//           Y          = Mul(Cast(Normalized, V), scale)   (V: scale's and Y's type)
//
// The spec casts Normalized "back to the original type of X" and multiplies
// by scale; X (T) and scale (V) may differ, and Y is V: the cast is to V,
// the one type Mul accepts (the same when T = V). Preconditions (each an
// Error naming the node): X's and scale's element types known; stash_type
// a floating type; X's rank known unless axis is negative and the target
// is 11 or later; a target of opset 7 or later.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_rmsnorm_23(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  if (n.input_size() != 2) refuse(s, fmt::format("{} inputs; RMSNormalization takes 2", n.input_size()));
  require_broadcasting(s);
  const DType t = known_type(s, n.input(0), "input X");
  const DType v = known_type(s, n.input(1), "input scale");
  const DType u = stash_type(s);
  const std::vector<int64_t> axes = trailing_axes(s, attr_int(n, "axis", -1));
  const auto* eps = find_attr(n, "epsilon");

  Lowering l{s, opset};
  const std::string xu = l.cast(n.input(0), t, u, "stashed");
  const std::string mean_square = l.reduce_mean(l.add("Mul", {xu, xu}, "squared"), axes, "mean_square");
  const std::string with_eps = l.add("Add", {mean_square, l.scalar(u, eps ? eps->f() : 1e-5f, "epsilon")}, "mean_square_eps");
  const std::string rms = l.add("Sqrt", {with_eps}, "rms");
  const std::string normalized = l.cast(l.add("Div", {xu, rms}, "normalized_stash"), u, v, "normalized");
  l.add("Mul", {normalized, n.input(1)}, "y", n.output(0));
}

}  // namespace bnorm::steps
