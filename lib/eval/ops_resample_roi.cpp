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

#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/ops_resample.h"

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
  const std::string ctm = attr_string(node, "coordinate_transformation_mode", ctx.version < 16 ? "output_half_pixel" : "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") fail(ErrorKind::input, "unknown coordinate_transformation_mode '{}'", ctm);
  const std::string mode = attr_string(node, "mode", "avg");
  if (mode != "avg" && mode != "max") fail(ErrorKind::input, "unknown mode '{}'", mode);
  const int64_t oh = attr_int(node, "output_height", 1), ow = attr_int(node, "output_width", 1);
  const int64_t ratio = attr_int(node, "sampling_ratio", 0);
  const double scale = attr_float(node, "spatial_scale", 1.0f);
  if (oh <= 0 || ow <= 0 || ratio < 0 || ratio > 4096) fail(ErrorKind::input, "invalid output size or sampling_ratio");
  const int64_t channels = x.dims[1], height = x.dims[2], width = x.dims[3];
  if ((height == 0 || width == 0) && num * channels > 0) fail(ErrorKind::input, "X {} is empty", shape_str(x.dims));
  Tensor y(x.dtype, {num, channels, oh, ow});
  const std::vector<double> xv = x.to_f64(), rv = rois.to_f64();
  std::vector<double> yv(static_cast<size_t>(y.numel()));
  const bool half = ctm == "half_pixel";
  for (int64_t r = 0; r < num; ++r) {
    if (batch[r] < 0 || batch[r] >= x.dims[0]) fail(ErrorKind::input, "batch index {} is out of range", batch[r]);
    const double shift = half ? 0.5 : 0.0;
    const double x0 = rv[r * 4] * scale - shift, y0 = rv[r * 4 + 1] * scale - shift;
    double rw = rv[r * 4 + 2] * scale - shift - x0, rh = rv[r * 4 + 3] * scale - shift - y0;
    if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    const double gh_d = ratio > 0 ? static_cast<double>(ratio) : std::ceil(rh / static_cast<double>(oh));
    const double gw_d = ratio > 0 ? static_cast<double>(ratio) : std::ceil(rw / static_cast<double>(ow));
    if (!(gh_d < 4096 && gw_d < 4096)) fail(ErrorKind::input, "roi {} needs too many sampling points", r);
    const auto gh = static_cast<int64_t>(std::max(gh_d, 0.0)), gw = static_cast<int64_t>(std::max(gw_d, 0.0));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ph = 0; ph < oh; ++ph) {
      for (int64_t pw = 0; pw < ow; ++pw) {
        std::vector<RoiBin> pts;
        for (int64_t iy = 0; iy < gh; ++iy) {
          const double yy = y0 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
          for (int64_t ix = 0; ix < gw; ++ix) {
            const double xx = x0 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
            pts.push_back(roi_point(yy, xx, height, width));
          }
        }
        for (int64_t c = 0; c < channels; ++c) {
          const double* plane = xv.data() + (batch[r] * channels + c) * height * width;
          double acc = 0;
          bool first = true;
          for (const RoiBin& p : pts) {
            if (mode == "avg") {
              for (int k = 0; k < 4; ++k) acc += p.w[k] * plane[p.pos[k]];
              continue;
            }
            double m = p.w[0] * plane[p.pos[0]];
            for (int k = 1; k < 4; ++k) m = std::max(m, p.w[k] * plane[p.pos[k]]);
            acc = first ? m : std::max(acc, m);
            first = false;
          }
          yv[((r * channels + c) * oh + ph) * ow + pw] = mode == "avg" ? acc / count : acc;
        }
      }
    }
  }
  store_values(y, yv.data());
  return {std::move(y)};
}

}  // namespace bnorm::eval
