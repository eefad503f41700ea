// Layout moves: DepthToSpace (1, 11, 13), SpaceToDepth (1, 13),
// CenterCropPad (18) and Col2Im (18).
//
// DepthToSpace  [N, C, H, W] -> [N, C/b², H b, W b] with blocksize b:
//   DCR (1; default from 11): y[n, c, h b + i, w b + j] = x[n, (i b + j) C/b² + c, h, w]
//   CRD (11+):                y[n, c, h b + i, w b + j] = x[n, c b² + i b + j, h, w]
// SpaceToDepth  the inverse of DCR: [N, C, H, W] -> [N, C b², H/b, W/b].
// CenterCropPad for each axis in `axes` (default all) with target t and
//   length d: a crop starting at floor((d - t) / 2), or zero padding of
//   floor((t - d) / 2) before and the rest after.
// Col2Im        input [N, C prod(block), L] summed back into [N, C, image]:
//   block element b of block location l lands at l * stride - pad_begin +
//   b * dilation on each axis (outside the image: dropped); L must be the
//   number of block locations. Floating sums in float64 rounded once;
//   integer sums wrap in 64 bits (bool is refused: no sum is defined).
// The moves copy elements of any type bnorm holds, bit for bit.
#include <algorithm>
#include <cstring>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/tensor/ops.h"

namespace bnorm::eval {

namespace {

// y of `dims` whose element i (C order) is x's element source(i).
template <typename F>
Tensor gather(const Tensor& x, const std::vector<int64_t>& dims, F source) {
  Tensor y(x.dtype, dims);
  const size_t es = dtype_size(x.dtype);
  const int64_t n = y.numel();
  for (int64_t i = 0; i < n; ++i) std::memcpy(y.bytes.data() + i * es, x.bytes.data() + source(i) * es, es);
  return y;
}

int64_t blocksize(const OpContext& ctx, const Tensor& x) {
  if (x.dims.size() != 4) fail(ErrorKind::input, "input must be 4-D [N, C, H, W], has shape {}", shape_str(x.dims));
  if (!find_attr(*ctx.node, "blocksize")) fail(ErrorKind::input, "attribute 'blocksize' is required");
  const int64_t b = attr_int(*ctx.node, "blocksize", 1);
  if (b <= 0 || b > (int64_t{1} << 20)) fail(ErrorKind::input, "blocksize {} must be positive", b);
  return b;
}

}  // namespace

Tensors op_depth_to_space(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const int64_t b = blocksize(ctx, x);
  if (ctx.version < 11 && find_attr(*ctx.node, "mode")) fail(ErrorKind::input, "DepthToSpace-1 has no attribute 'mode'");
  const std::string mode = attr_string(*ctx.node, "mode", "DCR");
  if (mode != "DCR" && mode != "CRD") fail(ErrorKind::input, "unknown mode '{}'", mode);
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  if (C % (b * b) != 0) fail(ErrorKind::input, "channels {} are not a multiple of blocksize² {}", C, b * b);
  const int64_t c_out = C / (b * b), ho = H * b, wo = W * b;
  const bool dcr = mode == "DCR";
  return {gather(x, {N, c_out, ho, wo}, [&](int64_t o) {
    const int64_t w = o % wo, h = (o / wo) % ho, c = (o / (wo * ho)) % c_out, n = o / (wo * ho * c_out);
    const int64_t i = h % b, j = w % b;
    const int64_t ci = dcr ? (i * b + j) * c_out + c : c * b * b + i * b + j;
    return ((n * C + ci) * H + h / b) * W + w / b;
  })};
}

Tensors op_space_to_depth(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const int64_t b = blocksize(ctx, x);
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  if (H % b != 0 || W % b != 0) fail(ErrorKind::input, "H and W of {} are not multiples of blocksize {}", shape_str(x.dims), b);
  const int64_t c_out = C * b * b, ho = H / b, wo = W / b;
  return {gather(x, {N, c_out, ho, wo}, [&](int64_t o) {
    const int64_t w = o % wo, h = (o / wo) % ho, co = (o / (wo * ho)) % c_out, n = o / (wo * ho * c_out);
    const int64_t c = co % C, ij = co / C, i = ij / b, j = ij % b;
    return ((n * C + c) * H + h * b + i) * W + w * b + j;
  })};
}

Tensors op_center_crop_pad(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input_data");
  const std::vector<int64_t> shape = read_ints(ctx.required(1, "shape"), "shape");
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes;
  if (const auto a = attr_ints(*ctx.node, "axes")) {
    for (int64_t v : *a) axes.push_back(normalize_axis(v, rank, "axes"));
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  if (shape.size() != axes.size()) fail(ErrorKind::input, "'shape' has {} values for {} axes", shape.size(), axes.size());
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    for (int64_t i = 0; i < x.dims[k]; ++i) maps[k].push_back(i);
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = x.dims[axes[i]], t = shape[i];
    if (t < 0 || t > (int64_t{1} << 40)) fail(ErrorKind::input, "target length {} is invalid", t);
    if (std::count(axes.begin(), axes.end(), axes[i]) > 1) fail(ErrorKind::input, "axis {} is repeated", axes[i]);
    // Cropping starts at floor((d - t) / 2); padding puts the odd pixel after.
    const int64_t shift = d >= t ? (d - t) / 2 : -((t - d) / 2);
    auto& m = maps[axes[i]];
    m.clear();
    for (int64_t j = 0; j < t; ++j) m.push_back(j + shift >= 0 && j + shift < d ? j + shift : -1);
  }
  return one_tensor(remap(x, maps));
}

namespace {

struct Col2ImGeometry {
  std::vector<int64_t> image, block, stride, dil, pad, count;  // count: block locations per axis
  int64_t block_size = 1, locations = 1;
};

Col2ImGeometry col2im_geometry(const OpContext& ctx, const Tensor& x) {
  Col2ImGeometry g;
  g.image = read_ints(ctx.required(1, "image_shape"), "image_shape");
  g.block = read_ints(ctx.required(2, "block_shape"), "block_shape");
  const size_t nd = g.image.size();
  if (nd == 0 || g.block.size() != nd) fail(ErrorKind::input, "image_shape and block_shape must have the same length");
  const auto& node = *ctx.node;
  g.stride = attr_ints(node, "strides").value_or(std::vector<int64_t>(nd, 1));
  g.dil = attr_ints(node, "dilations").value_or(std::vector<int64_t>(nd, 1));
  g.pad = attr_ints(node, "pads").value_or(std::vector<int64_t>(2 * nd, 0));
  if (g.stride.size() != nd || g.dil.size() != nd || g.pad.size() != 2 * nd) {
    fail(ErrorKind::input, "strides, dilations or pads do not match {} spatial axes", nd);
  }
  for (size_t d = 0; d < nd; ++d) {
    const int64_t limit = int64_t{1} << 40;
    if (g.image[d] < 0 || g.block[d] <= 0 || g.stride[d] <= 0 || g.dil[d] <= 0 || g.pad[d] < 0 ||
        g.pad[nd + d] < 0 || g.image[d] > limit || g.block[d] > limit || g.dil[d] > limit || g.pad[d] > limit ||
        g.pad[nd + d] > limit) {
      fail(ErrorKind::input, "invalid Col2Im geometry on axis {}", d);
    }
    const int64_t room = g.image[d] + g.pad[d] + g.pad[nd + d] - (g.dil[d] * (g.block[d] - 1) + 1);
    g.count.push_back(room < 0 ? 0 : room / g.stride[d] + 1);
  }
  g.block_size = checked_numel(g.block);
  g.locations = checked_numel(g.count);
  if (x.dims.size() != 3 || x.dims[1] % g.block_size != 0 || x.dims[2] != g.locations) {
    fail(ErrorKind::input, "input {} does not hold blocks {} at {} locations", shape_str(x.dims), shape_str(g.block),
         g.locations);
  }
  return g;
}

// out[n, c, image] += in[n, c * block_size + b, l] over every block element b and location l.
template <typename A>
void col2im_sum(const std::vector<A>& in, std::vector<A>& out, int64_t planes, const Col2ImGeometry& g) {
  const size_t nd = g.image.size();
  const int64_t image_size = product(g.image);
  std::vector<int64_t> b(nd), l(nd);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t bf = 0; bf < g.block_size; ++bf) {
      for (int64_t r = bf, d = static_cast<int64_t>(nd); d-- > 0;) b[d] = r % g.block[d], r /= g.block[d];
      const A* src = in.data() + (p * g.block_size + bf) * g.locations;
      for (int64_t lf = 0; lf < g.locations; ++lf) {
        for (int64_t r = lf, d = static_cast<int64_t>(nd); d-- > 0;) l[d] = r % g.count[d], r /= g.count[d];
        int64_t at = 0;
        bool inside = true;
        for (size_t d = 0; d < nd && inside; ++d) {
          const int64_t pos = l[d] * g.stride[d] - g.pad[d] + b[d] * g.dil[d];
          inside = pos >= 0 && pos < g.image[d];
          at = at * g.image[d] + pos;
        }
        if (inside) out[p * image_size + at] += src[lf];
      }
    }
  }
}

}  // namespace

Tensors op_col2im(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const Col2ImGeometry g = col2im_geometry(ctx, x);
  const int64_t channels = x.dims[1] / g.block_size;
  std::vector<int64_t> dims{x.dims[0], channels};
  dims.insert(dims.end(), g.image.begin(), g.image.end());
  Tensor y(x.dtype, dims);
  const auto n = static_cast<size_t>(y.numel());
  if (is_floating(x.dtype)) {
    std::vector<double> out(n, 0.0);
    col2im_sum(x.to_f64(), out, x.dims[0] * channels, g);
    store_values(y, out.data());
  } else if (x.dtype == DType::boolean) {
    fail(ErrorKind::unsupported, "Col2Im of bool is not supported");
  } else {
    // Integers: sums wrap modulo 2^64, then modulo the type's width.
    std::vector<uint64_t> out(n, 0);
    col2im_sum(load_values<uint64_t>(x), out, x.dims[0] * channels, g);
    store_any(y, out.data());
  }
  return one_tensor(std::move(y));
}

}  // namespace bnorm::eval
