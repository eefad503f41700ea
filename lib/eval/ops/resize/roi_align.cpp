// RoiAlign (10, 16, 22).
//
// RoiAlign: Y[r, c, ph, pw] pools X[batch_indices[r], c] over bin (ph, pw)
// of roi r = (x1, y1, x2, y2) * spatial_scale, shifted by -0.5 with
// coordinate_transformation_mode half_pixel (16+, the default there) and
// not shifted with output_half_pixel (the only behaviour of 10, whose rois
// are at least 1 x 1). Each bin takes a grid of sampling_ratio² points
// (0: ceil(roi size / output size) per axis) at the grid cells' centers,
// each bilinear in X: a point beyond [-1, size] reads 0, one in [-1, 0]
// reads the edge. avg: the mean over the grid; max: the max over the grid
// of the four weighted corner values w_i * v_i (not the max of the
// interpolated values: onnxruntime's and ONNX's reference definition, which
// the conformance data follows).
// Values in float64, rounded once.
#include <algorithm>
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/resize/ops.h"

namespace bnorm::eval {

namespace {

struct RoiBin {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// The bilinear taps of point (y, x) in an H x W plane, ORT's RoiAlign rules.
RoiBin roi_point(double y, double x, int64_t height, int64_t width) {
  RoiBin b;
  const auto fh = static_cast<double>(height), fw = static_cast<double>(width);
  if (y < -1.0 || y > fh || x < -1.0 || x > fw || std::isnan(y) || std::isnan(x)) return b;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) y = static_cast<double>(y_high = y_low = height - 1);
  if (x_low >= width - 1) x = static_cast<double>(x_high = x_low = width - 1);
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low), hy = 1 - ly, hx = 1 - lx;
  b = {{y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high},
       {hy * hx, hy * lx, ly * hx, ly * lx}};
  return b;
}

struct RoiParams {
  bool half = true, max = false;
  int64_t oh = 1, ow = 1, ratio = 0, channels = 0, height = 0, width = 0;
  double scale = 1;
};

// Pools one roi (x1, y1, x2, y2) of image `img` (channels planes) into
// out[c, ph, pw].
void align_roi(const double* roi, const double* img, const RoiParams& p, double* out) {
  const double shift = p.half ? 0.5 : 0.0;
  const double x0 = roi[0] * p.scale - shift, y0 = roi[1] * p.scale - shift;
  double rw = roi[2] * p.scale - shift - x0, rh = roi[3] * p.scale - shift - y0;
  if (!p.half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
  const auto oh = static_cast<double>(p.oh), ow = static_cast<double>(p.ow);
  const double bh = rh / oh, bw = rw / ow;
  const double gh_d = p.ratio > 0 ? static_cast<double>(p.ratio) : std::ceil(rh / oh);
  const double gw_d = p.ratio > 0 ? static_cast<double>(p.ratio) : std::ceil(rw / ow);
  if (!(gh_d < 4096 && gw_d < 4096)) fail(ErrorKind::input, "a roi needs {} x {} sampling points", gh_d, gw_d);
  const auto gh = static_cast<int64_t>(std::max(gh_d, 0.0)), gw = static_cast<int64_t>(std::max(gw_d, 0.0));
  const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
  const int64_t plane_size = p.height * p.width;
  std::vector<RoiBin> pts;
  for (int64_t ph = 0; ph < p.oh; ++ph) {
    for (int64_t pw = 0; pw < p.ow; ++pw) {
      pts.clear();
      for (int64_t iy = 0; iy < gh; ++iy) {
        const double yy = y0 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / gh_d;
        for (int64_t ix = 0; ix < gw; ++ix) {
          const double xx = x0 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / gw_d;
          pts.push_back(roi_point(yy, xx, p.height, p.width));
        }
      }
      for (int64_t c = 0; c < p.channels; ++c) {
        const double* plane = img + c * plane_size;
        double acc = 0;
        for (size_t i = 0; i < pts.size(); ++i) {
          const RoiBin& b = pts[i];
          double m = p.max ? b.w[0] * plane[b.pos[0]] : 0.0;
          for (int k = 0; k < 4; ++k) {
            if (p.max) m = std::max(m, b.w[k] * plane[b.pos[k]]);
            else acc += b.w[k] * plane[b.pos[k]];
          }
          if (p.max) acc = i == 0 ? m : std::max(acc, m);
        }
        out[(c * p.oh + ph) * p.ow + pw] = p.max ? acc : acc / count;
      }
    }
  }
}

}  // namespace

Tensors op_roi_align(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& rois = ctx.required(1, "rois");
  const std::vector<int64_t> batch = read_ints(ctx.required(2, "batch_indices"), "batch_indices");
  const auto& node = *ctx.node;
  if (x.dims.size() != 4) fail(ErrorKind::input, "X must be 4-D, has shape {}", shape_str(x.dims));
  if (!is_floating(x.dtype) || rois.dtype != x.dtype) fail(ErrorKind::input, "X and rois must be of one float type");
  const int64_t num = rois.dims.empty() ? -1 : rois.dims[0];
  if (rois.dims.size() != 2 || rois.dims[1] != 4 || static_cast<int64_t>(batch.size()) != num) {
    fail(ErrorKind::input, "rois {} and batch_indices of {} do not match", shape_str(rois.dims), batch.size());
  }
  if (ctx.version < 16 && find_attr(node, "coordinate_transformation_mode")) {
    fail(ErrorKind::input, "attribute 'coordinate_transformation_mode' is not part of RoiAlign-10");
  }
  const std::string ctm =
      attr_string(node, "coordinate_transformation_mode", ctx.version < 16 ? "output_half_pixel" : "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    fail(ErrorKind::input, "unknown coordinate_transformation_mode '{}'", ctm);
  }
  const std::string mode = attr_string(node, "mode", "avg");
  if (mode != "avg" && mode != "max") fail(ErrorKind::input, "unknown mode '{}'", mode);
  RoiParams p;
  p.half = ctm == "half_pixel";
  p.max = mode == "max";
  p.oh = attr_int(node, "output_height", 1);
  p.ow = attr_int(node, "output_width", 1);
  p.ratio = attr_int(node, "sampling_ratio", 0);
  p.scale = attr_float(node, "spatial_scale", 1.0f);
  if (p.oh <= 0 || p.ow <= 0 || p.ratio < 0 || p.ratio > 4096) fail(ErrorKind::input, "invalid output size or sampling_ratio");
  p.channels = x.dims[1];
  p.height = x.dims[2];
  p.width = x.dims[3];
  if ((p.height == 0 || p.width == 0) && num * p.channels > 0) fail(ErrorKind::input, "X {} is empty", shape_str(x.dims));
  Tensor y(x.dtype, {num, p.channels, p.oh, p.ow});
  const std::vector<double> xv = x.to_f64(), rv = rois.to_f64();
  std::vector<double> yv(static_cast<size_t>(y.numel()));
  const int64_t image = p.channels * p.height * p.width, pooled = p.channels * p.oh * p.ow;
  for (int64_t r = 0; r < num; ++r) {
    if (batch[r] < 0 || batch[r] >= x.dims[0]) fail(ErrorKind::input, "batch index {} is out of range", batch[r]);
    align_roi(rv.data() + r * 4, xv.data() + batch[r] * image, p, yv.data() + r * pooled);
  }
  store_values(y, yv.data());
  return one_tensor(std::move(y));
}

}  // namespace bnorm::eval
