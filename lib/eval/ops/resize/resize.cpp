// Upsample and Resize: the attributes and inputs of each version read into
// one resampling (resize_kernel.cpp, which holds the formulas).
//
// Upsample  1: 4-D X, height_scale/width_scale, mode nearest or bilinear.
//           7: `scales` attribute; 9: `scales` input; mode nearest or
//           linear. Scales >= 1, out = floor(in * scale), coordinates
//           asymmetric (x / scale), nearest reads floor(x / scale).
// Resize    10: as Upsample-9 but scales may be below 1 (nearest then
//           reads ceil(x / scale), as onnxruntime does: the spec says
//           nothing).
//           11: roi, scales (empty when sizes is used) and sizes; modes
//           nearest, linear, cubic; coordinate_transformation_mode
//           (default half_pixel, with tf_half_pixel_for_nn), nearest_mode,
//           cubic_coeff_a, exclude_outside, extrapolation_value.
//           13: roi and scales optional; tf_half_pixel_for_nn removed.
//           18: axes, antialias, keep_aspect_ratio_policy.
//           19: half_pixel_symmetric.
// With scales, out = floor(in * scale) (the roi does not enter, as in ONNX's
// shape inference, its reference and onnxruntime; the spec's formula
// multiplies by roi_end - roi_start) and the target length is in * scale,
// possibly fractional: align_corners, pytorch_half_pixel and
// tf_crop_and_resize divide by it as ONNX's reference does. With sizes the
// scale is out / in; not_larger / not_smaller use the min / max of those
// ratios over `axes` for every axis and out = floor(scale * in + 0.5).
// pytorch_half_pixel with a target length of 1 reads coordinate 0 (the
// spec; ONNX's reference reads -0.5).
#include <algorithm>
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/resize/ops.h"
#include "eval/ops/resize/resize.h"

namespace bnorm::eval {

namespace {

using resize::AxisTarget;
using resize::Interp;
using resize::Spec;

// Upsample-1 names its linear mode "bilinear"; cubic came with Resize-11.
Interp read_mode(const OpContext& ctx, bool bilinear_name, bool cubic) {
  const std::string mode = attr_string(*ctx.node, "mode", "nearest");
  if (mode == "nearest") return Interp::nearest;
  if (mode == (bilinear_name ? "bilinear" : "linear")) return Interp::linear;
  if (mode == "cubic" && cubic) return Interp::cubic;
  fail(ErrorKind::input, "'{}' is not a mode of {}-{}", mode, ctx.node->op_type(), ctx.version);
}

std::vector<double> read_scales(const Tensor& t) {
  if (!is_floating(t.dtype)) fail(ErrorKind::input, "input 'scales' must be float, not {}", dtype_name(t.dtype));
  return t.to_f64();
}

// Targets from one scale per axis: out = floor(in * scale).
std::vector<AxisTarget> from_scales(const Tensor& x, const std::vector<double>& scales, bool at_least_one) {
  if (scales.size() != x.dims.size()) {
    fail(ErrorKind::input, "{} scales for an input of rank {}", scales.size(), x.dims.size());
  }
  std::vector<AxisTarget> t(scales.size());
  for (size_t k = 0; k < scales.size(); ++k) {
    const double s = scales[k];
    if (!(s > 0) || std::isinf(s) || (at_least_one && s < 1)) {
      fail(ErrorKind::input, "scale {} must be {}", s, at_least_one ? "at least 1" : "positive and finite");
    }
    t[k].scale = s;
    t[k].length = static_cast<double>(x.dims[k]) * s;
    if (t[k].length > 9e18) fail(ErrorKind::input, "scale {} makes axis {} too long", s, k);
    t[k].out = static_cast<int64_t>(std::floor(t[k].length));
  }
  return t;
}

Tensors upsample_or_resize10(const OpContext& ctx, const Tensor& x, std::vector<double> scales, bool upsample) {
  Spec s;
  s.mode = read_mode(ctx, upsample && ctx.version < 7, false);
  return one_tensor(resize::resample(x, s, from_scales(x, scales, upsample)));
}

Spec read_spec(const OpContext& ctx) {
  const auto& n = *ctx.node;
  if (ctx.version < 18) {
    for (const char* a : {"axes", "antialias", "keep_aspect_ratio_policy"}) {
      if (find_attr(n, a)) fail(ErrorKind::input, "attribute '{}' is not part of Resize-{}", a, ctx.version);
    }
  }
  Spec s;
  s.mode = read_mode(ctx, false, true);
  s.transform = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  // Its value is one the version defines: check_supported (model/attr_values.h) refused any other before the run.
  s.nearest = attr_string(n, "nearest_mode", "round_prefer_floor");
  const std::string& m = s.nearest;
  if (m != "round_prefer_floor" && m != "round_prefer_ceil" && m != "floor" && m != "ceil") {
    fail(ErrorKind::input, "unknown nearest_mode '{}'", m);
  }
  s.cubic_a = attr_float(n, "cubic_coeff_a", -0.75f);
  // Nearest reads one sample: exclude_outside and antialias shape only the
  // linear and cubic filters.
  s.exclude_outside = attr_int(n, "exclude_outside", 0) != 0;
  s.antialias = attr_int(n, "antialias", 0) != 0;
  s.extrapolation = attr_float(n, "extrapolation_value", 0.0f);
  return s;
}

std::vector<int64_t> resize_axes(const OpContext& ctx, size_t rank) {
  std::vector<int64_t> axes;
  if (const auto a = attr_ints(*ctx.node, "axes")) {
    for (int64_t v : *a) axes.push_back(normalize_axis(v, static_cast<int64_t>(rank), "axes"));
    for (size_t i = 0; i < axes.size(); ++i) {
      if (std::count(axes.begin(), axes.end(), axes[i]) > 1) fail(ErrorKind::input, "axis {} is repeated", axes[i]);
    }
  } else {
    for (size_t k = 0; k < rank; ++k) axes.push_back(static_cast<int64_t>(k));
  }
  return axes;
}

// Targets from `sizes` over `axes` under keep_aspect_ratio_policy.
void from_sizes(const OpContext& ctx, const Tensor& x, const std::vector<int64_t>& axes,
                const std::vector<int64_t>& sizes, std::vector<AxisTarget>& t) {
  const std::string policy = attr_string(*ctx.node, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    fail(ErrorKind::input, "unknown keep_aspect_ratio_policy '{}'", policy);
  }
  double common = policy == "not_larger" ? INFINITY : 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t in = x.dims[axes[i]];
    if (sizes[i] < 0) fail(ErrorKind::input, "sizes has a negative value {}", sizes[i]);
    if (policy == "stretch") {
      AxisTarget& a = t[axes[i]];
      a.out = sizes[i];
      a.length = static_cast<double>(sizes[i]);
      a.scale = in ? a.length / static_cast<double>(in) : 1.0;
      continue;
    }
    if (in == 0) fail(ErrorKind::input, "keep_aspect_ratio_policy '{}' with an empty axis {}", policy, axes[i]);
    const double r = static_cast<double>(sizes[i]) / static_cast<double>(in);
    common = policy == "not_larger" ? std::min(common, r) : std::max(common, r);
  }
  if (policy == "stretch" || axes.empty()) return;
  for (int64_t d : axes) {
    t[d].scale = common;
    t[d].length = common * static_cast<double>(x.dims[d]);
    t[d].out = static_cast<int64_t>(std::floor(t[d].length + 0.5));
  }
}

Tensors resize_11(const OpContext& ctx, const Tensor& x) {
  const size_t rank = x.dims.size();
  if (rank == 0) fail(ErrorKind::input, "Resize needs an input of rank 1 or more");
  const Spec s = read_spec(ctx);
  const std::vector<int64_t> axes = resize_axes(ctx, rank);
  const size_t na = axes.size();
  if (ctx.version < 13) {
    ctx.required(1, "roi");
    ctx.required(2, "scales");
  }
  const Tensor* roi = ctx.input(1);
  const Tensor* scales = ctx.input(2);
  const Tensor* sizes = ctx.input(3);
  if (scales && scales->numel() == 0) scales = nullptr;
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if (!scales == !sizes) fail(ErrorKind::input, "exactly one of 'scales' and 'sizes' must be given");
  std::vector<AxisTarget> t(rank);
  for (size_t k = 0; k < rank; ++k) {
    t[k].out = x.dims[k];
    t[k].length = static_cast<double>(x.dims[k]);
  }
  if (scales) {
    const std::vector<double> v = read_scales(*scales);
    if (v.size() != na) fail(ErrorKind::input, "'scales' has {} values for {} axes", v.size(), na);
    std::vector<double> all(rank, 1.0);
    for (size_t i = 0; i < na; ++i) all[axes[i]] = v[i];
    t = from_scales(x, all, false);
  } else {
    const std::vector<int64_t> v = read_ints(*sizes, "sizes");
    if (v.size() != na) fail(ErrorKind::input, "'sizes' has {} values for {} axes", v.size(), na);
    from_sizes(ctx, x, axes, v, t);
  }
  if (s.transform == "tf_crop_and_resize") {
    if (!roi || roi->numel() != static_cast<int64_t>(2 * na)) {
      fail(ErrorKind::input, "tf_crop_and_resize needs a roi of {} values", 2 * na);
    }
    if (!is_floating(roi->dtype)) fail(ErrorKind::input, "input 'roi' must be float, not {}", dtype_name(roi->dtype));
    const std::vector<double> r = roi->to_f64();
    for (size_t i = 0; i < na; ++i) {
      t[axes[i]].roi_lo = r[i];
      t[axes[i]].roi_hi = r[na + i];
    }
  }
  return one_tensor(resize::resample(x, s, t));
}

}  // namespace

Tensors op_upsample(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  std::vector<double> scales;
  if (ctx.version < 7) {
    if (x.dims.size() != 4) fail(ErrorKind::input, "Upsample-1 needs a 4-D input, not {}", shape_str(x.dims));
    if (!find_attr(*ctx.node, "height_scale") || !find_attr(*ctx.node, "width_scale")) {
      fail(ErrorKind::input, "attributes 'height_scale' and 'width_scale' are required");
    }
    scales = {1, 1, attr_float(*ctx.node, "height_scale", 1), attr_float(*ctx.node, "width_scale", 1)};
    if (attr_string(*ctx.node, "mode", "nearest") == "bilinear") {
      // docs/semantics.md: the experimental schema does not say where bilinear samples.
      fail(ErrorKind::unsupported, "Upsample-1's bilinear mode has no exact definition (its schema gives none; Caffe2, "
                                   "where the op came from, aligns corners, which Upsample-7's linear does not)");
    }
  } else if (ctx.version < 9) {
    const auto fs = attr_floats(*ctx.node, "scales");
    if (!fs) fail(ErrorKind::input, "attribute 'scales' is missing");
    scales.assign(fs->begin(), fs->end());
  } else {
    scales = read_scales(ctx.required(1, "scales"));
  }
  return upsample_or_resize10(ctx, x, scales, true);
}

Tensors op_resize(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (ctx.version < 11) return upsample_or_resize10(ctx, x, read_scales(ctx.required(1, "scales")), false);
  return resize_11(ctx, x);
}

}  // namespace bnorm::eval
