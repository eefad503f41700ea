// Resize 13 <-> 18: axes, antialias, keep_aspect_ratio_policy.
//
//   Resize-13: Resize(X, roi?, scales?, sizes?) ...       scales/sizes over every axis
//   Resize-18: ... axes antialias keep_aspect_ratio_policy  scales/sizes over `axes` only
//
// Up: nothing (no axes: every axis; antialias 0 and policy stretch are 13's meaning).
// Down: antialias must be 0 and keep_aspect_ratio_policy stretch (Error
// naming the node otherwise); with axes, constant scales are expanded to
// every axis with 1 for the others, constant sizes with X's dims (which
// must be known); a roi (tf_crop_and_resize) with axes is refused.
// Formula: unchanged.
#include <fmt/format.h>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void expand(NormSite& s, int index, const std::vector<int64_t>& axes, int64_t rank) {
  onnx::NodeProto& n = s.node;
  const auto t = constant_input(s, index);
  if (!t) constant_ints(s, index, index == 2 ? "scales" : "sizes", "be expanded to every axis below 18");
  if (t->numel() == 0) return;
  const std::vector<double> v = t->to_f64();
  if (v.size() != axes.size()) refuse(s, fmt::format("input '{}' has {} values for {} axes", n.input(index), v.size(), axes.size()));
  std::vector<double> full(rank, 1.0);
  if (index == 3) {
    const auto dims = s.dims_of(n.input(0));
    if (!dims || static_cast<int64_t>(dims->size()) != rank) refuse(s, "X's shape is unknown: sizes cannot cover every axis");
    for (int64_t i = 0; i < rank; ++i) {
      if ((*dims)[i] < 0) refuse(s, "X's shape is unknown: sizes cannot cover every axis");
      full[i] = static_cast<double>((*dims)[i]);
    }
  }
  for (size_t i = 0; i < axes.size(); ++i) full[axes[i]] = v[i];
  Tensor out = Tensor::from_f64(t->dtype, {rank}, full);
  out.name = s.fresh(n.input(index) + "_every_axis");
  s.initializers.push_back(to_proto(out));
  n.set_input(index, out.name);
  s.report.set.push_back(fmt::format("{} over every axis as '{}'", index == 2 ? "scales" : "sizes", out.name));
}

}  // namespace

namespace {

void cross(NormSite& s, bool up) {
  if (up) return;
  onnx::NodeProto& n = s.node;
  if (attr_int(n, "antialias", 0) != 0) refuse(s, "antialias = 1 has no equivalent below version 18");
  if (const auto* p = find_attr(n, "keep_aspect_ratio_policy"); p && p->s() != "stretch") {
    refuse(s, fmt::format("keep_aspect_ratio_policy '{}' has no equivalent below version 18", p->s()));
  }
  remove_attr(n, "antialias");
  remove_attr(n, "keep_aspect_ratio_policy");
  const auto* a = find_attr(n, "axes");
  if (!a) return;
  std::vector<int64_t> axes(a->ints().begin(), a->ints().end());
  const auto rank = s.rank_of(n.input(0));
  if (!rank) refuse(s, "X's rank is unknown: scales or sizes over `axes` cannot cover every axis");
  for (auto& x : axes) {
    if (x < 0) x += *rank;
    if (x < 0 || x >= *rank) refuse(s, fmt::format("axis {} is out of range for rank {}", x, *rank));
  }
  if (n.input_size() > 1 && !n.input(1).empty()) {
    const auto roi = constant_input(s, 1);
    if (!roi || roi->numel() > 0) refuse(s, "a roi over `axes` (tf_crop_and_resize) is not expanded below version 18");
  }
  for (int i : {2, 3}) {
    if (i < n.input_size() && !n.input(i).empty()) expand(s, i, axes, *rank);
  }
  remove_attr(n, "axes");
}

}  // namespace

const Step resize_18{"resize_18", "resize_18", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
