// GroupNormalization-18 and -21 below opset 18: the function body of
// GroupNormalization.
//
//   Before: Y = GroupNormalization(X [N, C, D1..Dn], scale, bias)  num_groups = G, epsilon, stash_type (21)
//   After:  Xg         = Reshape(Cast(X, U), [0, G, -1])   (U = stash_type at 21, X's type T at 18;
//                                                             no Cast when X is U already)
//           Mean       = ReduceMean(Xg, [2]);  D = Sub(Xg, Mean)
//           Var        = ReduceMean(Mul(D, D), [2])
//           Normalized = Cast(Div(D, Sqrt(Add(Var, epsilon))), T)
//     18 (scale, bias [G], per group):
//           Y = Reshape(Add(Mul(Normalized, scale [G, 1]), bias [G, 1]), Shape(X))
//     21 (scale, bias [C], per channel):
//           Y = Add(Mul(Reshape(Normalized, Shape(X)), scale [C, 1, .., 1]), bias [C, 1, .., 1])
//
// scale and bias are reshaped as initializers when constant, by a Reshape
// otherwise. Preconditions (each an Error naming the node): X's element type
// known; num_groups >= 1; stash_type (21) a floating type; X's rank known
// at 21 (for the per-channel shape); a target of opset 7 or later.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_groupnorm_18(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  if (n.input_size() != 3) refuse(s, fmt::format("{} inputs; GroupNormalization takes 3", n.input_size()));
  require_broadcasting(s);
  const int64_t groups = attr_int(n, "num_groups", 0);
  if (groups < 1) refuse(s, fmt::format("num_groups = {}: it must be 1 or more", groups));
  const bool per_group = s.version < 21;
  const DType t = known_type(s, n.input(0), "input X");
  const DType u = per_group ? t : stash_type(s);
  std::optional<int> rank;
  if (!per_group) {
    rank = s.rank_of(n.input(0));
    if (!rank) refuse(s, fmt::format("the rank of input '{}' is unknown: scale and bias cannot be shaped per channel",
                                     n.input(0)));
    if (*rank < 2) refuse(s, fmt::format("input '{}' has rank {}; GroupNormalization needs [N, C, ...]", n.input(0), *rank));
  }
  const auto* eps = find_attr(n, "epsilon");

  Lowering l{s, opset};
  const std::string xg = l.reshape(l.cast(n.input(0), t, u, "stashed"), {0, groups, -1}, "grouped");
  const std::string mean = l.reduce_mean(xg, {2}, "mean");
  const std::string d = l.add("Sub", {xg, mean}, "centered");
  const std::string var = l.reduce_mean(l.add("Mul", {d, d}, "squared"), {2}, "var");
  const std::string var_eps = l.add("Add", {var, l.scalar(u, eps ? eps->f() : 1e-5f, "epsilon")}, "var_eps");
  const std::string stddev = l.add("Sqrt", {var_eps}, "stddev");
  const std::string normalized = l.cast(l.add("Div", {d, stddev}, "normalized_stash"), u, t, "normalized");
  const std::string shape = l.add("Shape", {n.input(0)}, "shape");
  if (per_group) {
    const std::string scaled = l.add("Mul", {normalized, l.reshaped_input(1, {-1, 1}, "scale_per_group")}, "scaled");
    const std::string biased = l.add("Add", {scaled, l.reshaped_input(2, {-1, 1}, "bias_per_group")}, "biased");
    l.add("Reshape", {biased, shape}, "y", n.output(0));
    return;
  }
  const std::string full = l.add("Reshape", {normalized, shape}, "normalized_full");
  std::vector<int64_t> per_channel{-1};
  per_channel.resize(static_cast<size_t>(*rank - 1), 1);
  auto param = [&](int i, const char* what) {
    return *rank == 2 ? n.input(i) : l.reshaped_input(i, per_channel, what);
  };
  const std::string scaled = l.add("Mul", {full, param(1, "scale_per_channel")}, "scaled");
  l.add("Add", {scaled, param(2, "bias_per_channel")}, "y", n.output(0));
}

}  // namespace bnorm::steps
