// Upsample and Resize, nearest mode only (linear and cubic are
// Error(unsupported)). Nearest is separable: each output index along an
// axis reads one input index, so the ops are one remap().
//
// Contract per op (versions in parentheses where they differ):
//   Upsample  scales from height_scale/width_scale on a 4-D input (1), the
//             `scales` attribute (7) or input 1 (9+); out = floor(dim *
//             scale), reading floor(i / scale).
//   Resize    10: scales input, as Upsample. 11+: scales (input 2) or sizes
//             (input 3); coordinate_transformation_mode (default
//             half_pixel) maps an output index to an input coordinate,
//             nearest_mode (default round_prefer_floor) rounds it, clamped
//             to the axis; tf_crop_and_resize reads the roi (input 1) and
//             writes extrapolation_value outside it.
#include <algorithm>
#include <cmath>

#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/op.h"
#include "eval/ops.h"
#include "eval/ops_broadcast.h"

namespace bnorm::eval {

namespace {

struct Nearest {
  std::string transform = "asymmetric";
  std::string rounding = "floor";
};

int64_t round_index(double v, const std::string& mode) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(v));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(v));
  const double f = std::floor(v);
  if (v - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  if (mode != "round_prefer_floor" && mode != "round_prefer_ceil") {
    fail(ErrorKind::input, "unknown nearest_mode '{}'", mode);
  }
  return static_cast<int64_t>(std::round(v));
}

// The input coordinate of output index i, ONNX's coordinate transformations.
double source_coordinate(const std::string& mode, int64_t i, int64_t in, int64_t out, double scale, double roi_start,
                         double roi_end) {
  const auto x = static_cast<double>(i);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (mode == "tf_crop_and_resize") {
    const double span = static_cast<double>(in - 1);
    if (out == 1) return 0.5 * (roi_start + roi_end) * span;
    return roi_start * span + x * (roi_end - roi_start) * span / static_cast<double>(out - 1);
  }
  fail(ErrorKind::unsupported, "coordinate_transformation_mode '{}' is not supported", mode);
}

Tensor resize_nearest(const OpContext& ctx, const Tensor& x, const std::vector<double>& scales,
                      const std::vector<int64_t>& sizes, const Nearest& how, const std::vector<double>& roi) {
  const size_t rank = x.dims.size();
  if (scales.size() != rank && sizes.size() != rank) {
    fail(ErrorKind::input, "{} scales and {} sizes for an input of rank {}", scales.size(), sizes.size(), rank);
  }
  const bool crop = how.transform == "tf_crop_and_resize";
  if (crop && roi.size() != 2 * rank) fail(ErrorKind::input, "roi has {} values, needs {}", roi.size(), 2 * rank);
  std::vector<std::vector<int64_t>> maps(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t in = x.dims[k];
    double scale = 0;
    int64_t out = 0;
    if (sizes.size() == rank) {
      out = sizes[k];
      scale = in ? static_cast<double>(out) / static_cast<double>(in) : 1.0;
    } else {
      scale = scales[k];
      if (!(scale > 0)) fail(ErrorKind::input, "scale {} must be positive", scale);
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * scale));
    }
    for (int64_t i = 0; i < out; ++i) {
      const double c = source_coordinate(how.transform, i, in, out, scale, crop ? roi[k] : 0, crop ? roi[rank + k] : 0);
      if (crop && (c < 0 || c > static_cast<double>(in - 1))) {
        maps[k].push_back(-1);
        continue;
      }
      maps[k].push_back(std::clamp<int64_t>(round_index(c, how.rounding), 0, in - 1));
    }
  }
  const double fill = attr_float(*ctx.node, "extrapolation_value", 0.0f);
  return remap(x, maps, make_any<double>(x.dtype, {}, {fill}).bytes);
}

void require_nearest(const OpContext& ctx) {
  const std::string mode = attr_string(*ctx.node, "mode", "nearest");
  if (mode != "nearest") fail(ErrorKind::unsupported, "{} mode '{}' is not supported", ctx.node->op_type(), mode);
}

std::vector<double> read_scales(const Tensor& t) {
  if (!is_floating(t.dtype)) fail(ErrorKind::input, "input 'scales' must be float, not {}", dtype_name(t.dtype));
  return t.to_f64();
}

}  // namespace

Tensors op_upsample(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  require_nearest(ctx);
  std::vector<double> scales;
  if (ctx.version < 7) {
    if (x.dims.size() != 4) fail(ErrorKind::input, "Upsample-1 needs a 4-D input, not {}", shape_str(x.dims));
    scales = {1, 1, attr_float(*ctx.node, "height_scale", 1), attr_float(*ctx.node, "width_scale", 1)};
  } else if (ctx.version < 9) {
    const auto fs = attr_floats(*ctx.node, "scales");
    if (!fs) fail(ErrorKind::input, "attribute 'scales' is missing");
    scales.assign(fs->begin(), fs->end());
  } else {
    scales = read_scales(ctx.required(1, "scales"));
  }
  return {resize_nearest(ctx, x, scales, {}, Nearest{}, {})};
}

Tensors op_resize(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  require_nearest(ctx);
  if (ctx.version < 11) return {resize_nearest(ctx, x, read_scales(ctx.required(1, "scales")), {}, Nearest{}, {})};
  if (find_attr(*ctx.node, "axes") || attr_int(*ctx.node, "antialias", 0) != 0) {
    fail(ErrorKind::unsupported, "Resize with 'axes' or 'antialias' is not supported");
  }
  Nearest how;
  how.transform = attr_string(*ctx.node, "coordinate_transformation_mode", "half_pixel");
  how.rounding = attr_string(*ctx.node, "nearest_mode", "round_prefer_floor");
  std::vector<double> roi, scales;
  std::vector<int64_t> sizes;
  if (const Tensor* t = ctx.input(1)) roi = t->to_f64();
  if (const Tensor* t = ctx.input(2); t && t->numel() > 0) scales = read_scales(*t);
  if (const Tensor* t = ctx.input(3); t && t->numel() > 0) sizes = read_ints(*t, "sizes");
  return {resize_nearest(ctx, x, scales, sizes, how, roi)};
}

}  // namespace bnorm::eval
