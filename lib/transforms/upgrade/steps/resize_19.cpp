// Resize 18 <-> 19: coordinate_transformation_mode half_pixel_symmetric.
//
//   half_pixel_symmetric (19):  x_original = offset + (x + 0.5) / scale - 0.5,
//     offset = length_original / 2 * (1 - output_width_int / output_width),
//     output_width = length_original * scale (fractional from a scale)
//   half_pixel (every version): x_original = (x + 0.5) / scale - 0.5
//
// Down: where every resized axis's output_width is a whole number, the
// offset is 0 and the two are the same formula, bit for bit:
//   Before (19): Resize(X, roi, scales | sizes) coordinate_transformation_mode half_pixel_symmetric
//   After  (18): the same with half_pixel
// That holds for `sizes` with keep_aspect_ratio_policy stretch (output_width
// is the size), and for constant scales where length x scale, computed in
// double from the float scale, is whole on every axis whose scale is not 1
// (X's dims there known). Anything else: Error naming the node and the
// axis. Any other mode crosses unchanged. Up: nothing (every value of 18
// means the same at 19).
#include <fmt/format.h>

#include <cmath>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void exact_or_refuse(NormSite& s) {
  const onnx::NodeProto& n = s.node;
  const bool sizes = n.input_size() > 3 && !n.input(3).empty();
  if (sizes) {
    const auto* p = find_attr(n, "keep_aspect_ratio_policy");
    if (p && p->s() != "stretch") {
      refuse(s, fmt::format("half_pixel_symmetric with sizes and keep_aspect_ratio_policy {} gives fractional output "
                            "widths, where it differs from half_pixel; no version below 19 has it",
                            p->s()));
    }
    return;  // stretch: output_width is the size itself
  }
  const auto scales = n.input_size() > 2 && !n.input(2).empty() ? constant_input(s, 2) : std::nullopt;
  if (!scales) {
    refuse(s, "half_pixel_symmetric with scales that are not a constant: whether each output width is whole (where it "
              "equals half_pixel) is unknown; no version below 19 has it");
  }
  const auto dims = s.dims_of(n.input(0));
  std::vector<int64_t> axes;
  if (const auto* a = find_attr(n, "axes")) axes.assign(a->ints().begin(), a->ints().end());
  const std::vector<double> v = scales->to_f64();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 1.0) continue;
    int64_t axis = axes.empty() ? static_cast<int64_t>(i) : axes.at(i);
    if (axis < 0 && dims) axis += static_cast<int64_t>(dims->size());
    const int64_t in = dims && axis >= 0 && axis < static_cast<int64_t>(dims->size()) ? (*dims)[axis] : -1;
    if (in < 0) {
      refuse(s, fmt::format("half_pixel_symmetric on axis {} of '{}', whose length is unknown: whether its output "
                            "width is whole (where it equals half_pixel) is unknown; no version below 19 has it",
                            axis, n.input(0)));
    }
    const double width = static_cast<double>(in) * v[i];
    if (std::floor(width) != width) {
      refuse(s, fmt::format("half_pixel_symmetric on axis {}: {} x {} = {} is fractional, where it differs from "
                            "half_pixel; no version below 19 has it",
                            axis, in, v[i], width));
    }
  }
}

void down(NormSite& s) {
  auto* a = const_cast<onnx::AttributeProto*>(find_attr(s.node, "coordinate_transformation_mode"));
  if (!a || a->s() != "half_pixel_symmetric") return;
  exact_or_refuse(s);
  a->set_s("half_pixel");
  s.report.set.push_back("coordinate_transformation_mode half_pixel (every output width whole: the same formula)");
}

void up(NormSite&) {}

}  // namespace

const Step resize_19{"resize_19", "resize_19", up, down};

}  // namespace bnorm::steps
