// GroupNormalization 18 <-> 21: scale and bias per group become per channel.
//
//   GroupNormalization-18: (X [N, C, ..], scale [G], bias [G]) epsilon num_groups = G
//   GroupNormalization-21: (X [N, C, ..], scale [C], bias [C]) epsilon num_groups stash_type
//     y = scale[c] * (x - mean_g) / sqrt(var_g + epsilon) + bias[c], c in group g = c / (C / G)
//
// Up: each group's value repeated C / G times: constants as new
// initializers; other values by Unsqueeze(v, [1]) -> Expand to [G, C / G]
// -> Reshape [-1]. C must be known from X's shape and divisible by G (Error
// naming the node otherwise).
// Down: scale and bias must be constants whose C / G values are equal
// within every group (Error naming the node and the input otherwise); one
// value per group is kept. stash_type (21: the precision of the
// statistics, default 1 = float) must be 1, the only one 18 has.
#include <fmt/format.h>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

int64_t channels_per_group(NormSite& s, int64_t groups) {
  const auto dims = s.dims_of(s.node.input(0));
  if (!dims || dims->size() < 2 || (*dims)[1] < 0) {
    refuse(s, fmt::format("the channel count of input '{}' is unknown: scale and bias cannot be made per channel",
                          s.node.input(0)));
  }
  const int64_t c = (*dims)[1];
  if (groups <= 0 || c % groups != 0) refuse(s, fmt::format("{} channels do not split into {} groups", c, groups));
  return c / groups;
}

std::string per_channel(NormSite& s, int i, int64_t groups, int64_t per) {
  const std::string& v = s.node.input(i);
  if (const auto t = constant_input(s, i)) {
    if (t->numel() != groups) refuse(s, fmt::format("input '{}' holds {} values for {} groups", v, t->numel(), groups));
    const std::vector<double> x = t->to_f64();
    std::vector<double> y;
    for (double g : x) y.insert(y.end(), per, g);
    Tensor out = Tensor::from_f64(t->dtype, {groups * per}, y);
    out.name = s.fresh(v + "_per_channel");
    s.initializers.push_back(to_proto(out));
    return out.name;
  }
  const std::string col = s.fresh(v + "_column"), wide = s.fresh(v + "_wide"), flat = s.fresh(v + "_per_channel");
  s.add_before("Unsqueeze", {v, s.add_int64s(v + "_axis", {1})}, {col});
  s.add_before("Expand", {col, s.add_int64s(v + "_wide_shape", {groups, per})}, {wide});
  s.add_before("Reshape", {wide, s.add_int64s(v + "_flat_shape", {-1})}, {flat});
  return flat;
}

std::string per_group(NormSite& s, int i, int64_t groups) {
  const std::string& v = s.node.input(i);
  const auto t = constant_input(s, i);
  if (!t) constant_ints(s, i, i == 1 ? "scale" : "bias", "be made per group below 21");
  const std::vector<double> x = t->to_f64();
  if (groups <= 0 || x.size() % groups != 0) refuse(s, fmt::format("input '{}' holds {} values for {} groups", v, x.size(), groups));
  const size_t per = x.size() / groups;
  std::vector<double> y;
  for (size_t g = 0; g < static_cast<size_t>(groups); ++g) {
    for (size_t k = 1; k < per; ++k) {
      if (!(x[g * per + k] == x[g * per])) {
        refuse(s, fmt::format("input '{}' differs within group {}: below 21 there is one value per group", v, g));
      }
    }
    y.push_back(x[g * per]);
  }
  Tensor out = Tensor::from_f64(t->dtype, {groups}, y);
  out.name = s.fresh(v + "_per_group");
  s.initializers.push_back(to_proto(out));
  return out.name;
}

}  // namespace

namespace {

void cross(NormSite& s, bool up) {
  onnx::NodeProto& n = s.node;
  if (n.input_size() != 3) refuse(s, fmt::format("{} inputs; GroupNormalization takes 3", n.input_size()));
  const int64_t groups = attr_int(n, "num_groups", 0);
  if (up) {
    const int64_t per = channels_per_group(s, groups);
    for (int i : {1, 2}) n.set_input(i, per_channel(s, i, groups, per));
    s.report.set.push_back("scale and bias per channel");
    return;
  }
  if (attr_int(n, "stash_type", 1) != 1) refuse(s, "stash_type other than 1 has no form below version 21");
  remove_attr(n, "stash_type");
  for (int i : {1, 2}) n.set_input(i, per_group(s, i, groups));
  s.report.set.push_back("scale and bias per group");
}

}  // namespace

const Step groupnorm_21{"groupnorm_21", "groupnorm_21", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
