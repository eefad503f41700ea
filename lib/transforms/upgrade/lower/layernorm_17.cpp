// LayerNormalization-17 below opset 17: the function body of
// LayerNormalization.
//
//   Before: Y, Mean?, InvStdDev? = LayerNormalization(X, Scale, B?)  axis epsilon stash_type
//   After:  Xu        = Cast(X, U)               (U = stash_type; no Cast when X is U already)
//           Mean      = ReduceMean(Xu, axes)     axes = [axis, rank), keepdims 1
//           D         = Sub(Xu, Mean)
//           Var       = ReduceMean(Mul(D, D), axes)
//           InvStdDev = Reciprocal(Sqrt(Add(Var, epsilon)))
//           Y         = Add(Mul(Cast(Mul(D, InvStdDev), T), Scale), B)   (no Add without B)
//
// Mean and InvStdDev, when the node has them, are those values (type U,
// shape X's dims before axis then ones, as the spec says). Scale and B
// broadcast as they did (multidirectional broadcasting includes the
// unidirectional one). Preconditions (each an Error naming the node): X's
// element type known; stash_type a floating type; X's rank known unless
// axis is negative and the target is 11 or later; a target of opset 7 or later.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_layernorm_17(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  if (n.input_size() < 2) refuse(s, fmt::format("{} inputs; LayerNormalization takes 2 or 3", n.input_size()));
  require_broadcasting(s);
  const DType t = known_type(s, n.input(0), "input X");
  const DType u = stash_type(s);
  const std::vector<int64_t> axes = trailing_axes(s, attr_int(n, "axis", -1));
  const auto* eps = find_attr(n, "epsilon");
  auto output = [&](int i) { return i < n.output_size() ? n.output(i) : std::string(); };
  const bool has_bias = n.input_size() > 2 && !n.input(2).empty();

  Lowering l{s, opset};
  const std::string xu = l.cast(n.input(0), t, u, "stashed");
  const std::string mean = l.reduce_mean(xu, axes, "mean", output(1));
  const std::string d = l.add("Sub", {xu, mean}, "centered");
  const std::string var = l.reduce_mean(l.add("Mul", {d, d}, "squared"), axes, "var");
  const std::string var_eps = l.add("Add", {var, l.scalar(u, eps ? eps->f() : 1e-5f, "epsilon")}, "var_eps");
  const std::string inv = l.add("Reciprocal", {l.add("Sqrt", {var_eps}, "stddev")}, "inv_stddev", output(2));
  const std::string normalized = l.cast(l.add("Mul", {d, inv}, "normalized_stash"), u, t, "normalized");
  const std::string scaled = l.add("Mul", {normalized, n.input(1)}, "scaled", has_bias ? "" : n.output(0));
  if (has_bias) l.add("Add", {scaled, n.input(2)}, "y", n.output(0));
}

}  // namespace bnorm::steps
