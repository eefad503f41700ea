// DeformConv (19, 22; 22 only adds bfloat16): Conv with learned sampling
// offsets, N-D.
//
// Kernel tap k (K taps, row-major over kernel_shape) of output position o
// in offset group g reads X[n, c] at
//   p_d = o_d * stride_d - pad_begin_d + k_d * dilation_d + offset[n, (g K + k) r + d, o]
// (r spatial axes) N-linearly, with zeros outside X, and weighs it by
// mask[n, g K + k, o] (default 1). Input channel c belongs to offset group
// c / (C / offset_group) and conv group c / (C / group):
//   Y[n, m, o] = B[m] + sum over c in m's group, k of W[m, c mod (C / group), k] * mask * X(p).
// The output size per axis is Conv's floor((in + pads - dilated kernel) /
// stride) + 1 and must match offset's spatial shape. As ONNX's reference;
// sums in float64, rounded once.
#include <algorithm>
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/resize/ops.h"

namespace bnorm::eval {

namespace {

struct DeformGeometry {
  size_t r = 0;
  int64_t n = 0, c = 0, oc = 0, group = 1, offset_group = 1, taps = 1, out_size = 1, in_size = 1;
  std::vector<int64_t> in, kernel, out, stride, dil, pad;
};

DeformGeometry deform_geometry(const OpContext& ctx, const Tensor& x, const Tensor& w, const Tensor& offset) {
  const auto& node = *ctx.node;
  DeformGeometry g;
  if (x.dims.size() < 3 || w.dims.size() != x.dims.size()) {
    fail(ErrorKind::input, "X {} and W {} must have one rank of 3 or more", shape_str(x.dims), shape_str(w.dims));
  }
  g.r = x.dims.size() - 2;
  // Each sample reads 2^r corners.
  if (g.r > 12) fail(ErrorKind::unsupported, "DeformConv over {} spatial axes is not supported", g.r);
  g.n = x.dims[0];
  g.c = x.dims[1];
  g.oc = w.dims[0];
  g.in.assign(x.dims.begin() + 2, x.dims.end());
  g.kernel = attr_ints(node, "kernel_shape").value_or(std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()));
  g.stride = attr_ints(node, "strides").value_or(std::vector<int64_t>(g.r, 1));
  g.dil = attr_ints(node, "dilations").value_or(std::vector<int64_t>(g.r, 1));
  g.pad = attr_ints(node, "pads").value_or(std::vector<int64_t>(2 * g.r, 0));
  g.group = attr_int(node, "group", 1);
  g.offset_group = attr_int(node, "offset_group", 1);
  if (g.kernel.size() != g.r || g.stride.size() != g.r || g.dil.size() != g.r || g.pad.size() != 2 * g.r) {
    fail(ErrorKind::input, "kernel_shape, strides, dilations or pads do not match {} spatial axes", g.r);
  }
  if (g.group <= 0 || g.offset_group <= 0 || g.c % g.group != 0 || g.oc % g.group != 0 || g.c % g.offset_group != 0 ||
      w.dims[1] * g.group != g.c) {
    fail(ErrorKind::input, "group {} / offset_group {} do not divide X {} and W {}", g.group, g.offset_group,
         shape_str(x.dims), shape_str(w.dims));
  }
  for (size_t d = 0; d < g.r; ++d) {
    const int64_t limit = int64_t{1} << 40;
    if (g.kernel[d] != w.dims[2 + d] || g.stride[d] <= 0 || g.dil[d] <= 0 || g.pad[d] < 0 || g.pad[g.r + d] < 0 ||
        g.dil[d] > limit || g.pad[d] > limit || g.pad[g.r + d] > limit) {
      fail(ErrorKind::input, "invalid kernel_shape, strides, dilations or pads on axis {}", d);
    }
    const int64_t room = g.in[d] + g.pad[d] + g.pad[g.r + d] - ((g.kernel[d] - 1) * g.dil[d] + 1);
    if (room < 0) fail(ErrorKind::input, "the kernel is larger than the padded input on axis {}", d);
    g.out.push_back(room / g.stride[d] + 1);
  }
  g.taps = product(g.kernel);
  g.out_size = product(g.out);
  g.in_size = product(g.in);
  std::vector<int64_t> want{g.n, g.offset_group * g.taps * static_cast<int64_t>(g.r)};
  want.insert(want.end(), g.out.begin(), g.out.end());
  if (offset.dims != want) fail(ErrorKind::input, "offset {} must have shape {}", shape_str(offset.dims), shape_str(want));
  return g;
}

// The N-linear value of plane `x` at `p` (zeros outside).
double sample(const double* x, const std::vector<int64_t>& in, const std::vector<double>& p) {
  const size_t r = in.size();
  double total = 0;
  for (uint64_t corner = 0; corner < (uint64_t{1} << r); ++corner) {
    double w = 1;
    int64_t at = 0;
    bool inside = true;
    for (size_t d = 0; d < r && inside; ++d) {
      const double lo = std::floor(p[d]);
      const bool up = (corner >> (r - 1 - d)) & 1;
      const double i = lo + (up ? 1 : 0);
      inside = i >= 0 && i < static_cast<double>(in[d]);
      w *= up ? p[d] - lo : 1 - (p[d] - lo);
      at = at * in[d] + static_cast<int64_t>(i);
    }
    if (inside && w != 0) total += w * x[at];
  }
  return total;
}

// The masked samples of batch n: col[c][k][o].
void deform_columns(const DeformGeometry& g, int64_t n, const std::vector<double>& xv, const std::vector<double>& ov,
                    const std::vector<double>* mv, std::vector<double>& col) {
  const auto r = static_cast<int64_t>(g.r);
  const int64_t c_per_offset = g.c / g.offset_group;
  std::vector<int64_t> k_idx(g.r), o_idx(g.r);
  std::vector<double> p(g.r);
  for (int64_t c = 0; c < g.c; ++c) {
    const int64_t og_of_c = c / c_per_offset;
    const double* plane = xv.data() + (n * g.c + c) * g.in_size;
    for (int64_t k = 0; k < g.taps; ++k) {
      for (int64_t rest = k, d = r; d-- > 0;) k_idx[d] = rest % g.kernel[d], rest /= g.kernel[d];
      for (int64_t o = 0; o < g.out_size; ++o) {
        for (int64_t rest = o, d = r; d-- > 0;) o_idx[d] = rest % g.out[d], rest /= g.out[d];
        for (int64_t d = 0; d < r; ++d) {
          const double off = ov[((n * g.offset_group + og_of_c) * g.taps * r + k * r + d) * g.out_size + o];
          p[d] = static_cast<double>(o_idx[d] * g.stride[d] - g.pad[d] + k_idx[d] * g.dil[d]) + off;
        }
        const double m = mv ? (*mv)[((n * g.offset_group + og_of_c) * g.taps + k) * g.out_size + o] : 1.0;
        // A NaN location reads NaN; one beyond 1e15 (or infinite) lies outside X and reads 0.
        const bool nan = std::any_of(p.begin(), p.end(), [](double v) { return std::isnan(v); });
        const bool far = std::any_of(p.begin(), p.end(), [](double v) { return std::fabs(v) >= 1e15; });
        col[(c * g.taps + k) * g.out_size + o] = nan ? NAN : far ? 0.0 : m * sample(plane, g.in, p);
      }
    }
  }
}

}  // namespace

Tensors op_deform_conv(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& w = ctx.required(1, "W");
  const Tensor& offset = ctx.required(2, "offset");
  const Tensor* bias = ctx.input(3);
  const Tensor* mask = ctx.input(4);
  const DeformGeometry g = deform_geometry(ctx, x, w, offset);
  if (!is_floating(x.dtype)) fail(ErrorKind::input, "X must be float, not {}", dtype_name(x.dtype));
  if (bias && bias->dims != std::vector<int64_t>{g.oc}) fail(ErrorKind::input, "B must have shape [{}]", g.oc);
  std::vector<int64_t> mask_dims{g.n, g.offset_group * g.taps};
  mask_dims.insert(mask_dims.end(), g.out.begin(), g.out.end());
  if (mask && mask->dims != mask_dims) fail(ErrorKind::input, "mask must have shape {}", shape_str(mask_dims));
  std::vector<int64_t> y_dims{g.n, g.oc};
  y_dims.insert(y_dims.end(), g.out.begin(), g.out.end());
  Tensor y(x.dtype, y_dims);
  const std::vector<double> xv = x.to_f64(), wv = w.to_f64(), ov = offset.to_f64();
  const std::vector<double> bv = bias ? bias->to_f64() : std::vector<double>(static_cast<size_t>(g.oc), 0.0);
  const std::vector<double> mv = mask ? mask->to_f64() : std::vector<double>{};
  std::vector<double> yv(static_cast<size_t>(y.numel()));
  const int64_t cg = g.c / g.group, og = g.oc / g.group;
  // col[c][k][o]: the masked sample of channel c for tap k at output o.
  std::vector<double> col(static_cast<size_t>(checked_buffer_numel({g.c, g.taps, g.out_size}, sizeof(double), "DeformConv columns")));
  for (int64_t n = 0; n < g.n; ++n) {
    deform_columns(g, n, xv, ov, mask ? &mv : nullptr, col);
    for (int64_t m = 0; m < g.oc; ++m) {
      double* out = yv.data() + (n * g.oc + m) * g.out_size;
      std::fill_n(out, g.out_size, bv[m]);
      const int64_t c0 = (m / og) * cg;
      for (int64_t ci = 0; ci < cg; ++ci) {
        for (int64_t k = 0; k < g.taps; ++k) {
          const double wk = wv[(m * cg + ci) * g.taps + k];
          const double* src = col.data() + ((c0 + ci) * g.taps + k) * g.out_size;
          for (int64_t o = 0; o < g.out_size; ++o) out[o] += wk * src[o];
        }
      }
    }
  }
  store_values(y, yv.data());
  return one_tensor(std::move(y));
}

}  // namespace bnorm::eval
