// Pooling: MaxPool, AveragePool (1-D to 3-D) and GlobalAveragePool.
//
// Window geometry as Conv (kernel_shape, strides, pads, auto_pad,
// dilations), plus ceil_mode (10+): the output size rounds up, but a window
// must start inside the input or its begin padding. AveragePool divides by
// the in-bounds count (count_include_pad = 0) or by the count inside the
// padded input (1). MaxPool's optional Indices are flat indices into X,
// spatial axes row-major (storage_order 0) or column-major (1).
#include <algorithm>
#include <limits>

#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/op.h"
#include "eval/ops.h"

namespace bnorm::eval {

namespace {

constexpr size_t kDims = 3;

struct PoolGeometry {
  size_t nd = 0;
  int64_t in[kDims], kernel[kDims], out[kDims], stride[kDims], dil[kDims], pad[kDims], pad_end[kDims];
};

PoolGeometry pool_geometry(const OpContext& ctx, const Tensor& x) {
  if (x.dims.size() < 3 || x.dims.size() > 5) {
    fail(ErrorKind::unsupported, "pooling of X {}: only 1-D to 3-D pooling is supported", shape_str(x.dims));
  }
  const auto& node = *ctx.node;
  PoolGeometry g;
  g.nd = x.dims.size() - 2;
  const size_t nd = g.nd, lead = kDims - nd;
  const auto kernel = attr_ints(node, "kernel_shape");
  if (!kernel || kernel->size() != nd) fail(ErrorKind::input, "kernel_shape must have {} values", nd);
  const auto stride = attr_ints(node, "strides").value_or(std::vector<int64_t>(nd, 1));
  const auto dil = attr_ints(node, "dilations").value_or(std::vector<int64_t>(nd, 1));
  const auto pads = attr_ints(node, "pads").value_or(std::vector<int64_t>(2 * nd, 0));
  if (stride.size() != nd || dil.size() != nd || pads.size() != 2 * nd) {
    fail(ErrorKind::input, "strides, dilations or pads do not match {} spatial dims", nd);
  }
  const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  const bool ceil_mode = attr_int(node, "ceil_mode", 0) != 0;
  for (size_t d = 0; d < kDims; ++d) {
    const bool real = d >= lead;
    const size_t r = d - lead;
    g.in[d] = real ? x.dims[2 + r] : 1;
    g.kernel[d] = real ? (*kernel)[r] : 1;
    g.stride[d] = real ? stride[r] : 1;
    g.dil[d] = real ? dil[r] : 1;
    g.pad[d] = real && auto_pad == "NOTSET" ? pads[r] : 0;
    g.pad_end[d] = real && auto_pad == "NOTSET" ? pads[nd + r] : 0;
    const int64_t span = (g.kernel[d] - 1) * g.dil[d] + 1;
    if (real && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) {
      g.out[d] = (g.in[d] + g.stride[d] - 1) / g.stride[d];
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * g.stride[d] + span - g.in[d]);
      g.pad[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[d] = total - g.pad[d];
    } else {
      const int64_t room = g.in[d] + g.pad[d] + g.pad_end[d] - span;
      g.out[d] = (ceil_mode ? (room + g.stride[d] - 1) / g.stride[d] : room / g.stride[d]) + 1;
      if (ceil_mode && (g.out[d] - 1) * g.stride[d] >= g.in[d] + g.pad[d]) --g.out[d];
    }
    if (g.out[d] <= 0) fail(ErrorKind::input, "the pooling window is larger than the padded input {}", shape_str(x.dims));
  }
  return g;
}

std::vector<int64_t> pooled_dims(const Tensor& x, const PoolGeometry& g) {
  std::vector<int64_t> dims{x.dims[0], x.dims[1]};
  for (size_t d = kDims - g.nd; d < kDims; ++d) dims.push_back(g.out[d]);
  return dims;
}

enum class PoolKind { max, average };

// Visits every output position of every plane with the in-bounds window
// elements; `f(plane, out_index, values...)` does the reduction.
template <typename T>
void pool(const std::vector<T>& x, int64_t planes, const PoolGeometry& g, PoolKind kind, bool include_pad,
          std::vector<T>& y, std::vector<int64_t>* indices, bool col_major) {
  const int64_t is = g.in[0] * g.in[1] * g.in[2], os = g.out[0] * g.out[1] * g.out[2];
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x.data() + p * is;
    int64_t o = p * os;
    for (int64_t oz = 0; oz < g.out[0]; ++oz)
      for (int64_t oy = 0; oy < g.out[1]; ++oy)
        for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
          const int64_t o3[kDims] = {oz, oy, ox};
          T best = -std::numeric_limits<T>::infinity();
          int64_t best_at = -1, count = 0, padded = 1;
          double sum = 0;
          int64_t lo[kDims], hi[kDims];
          for (size_t d = 0; d < kDims; ++d) {
            lo[d] = o3[d] * g.stride[d] - g.pad[d];
            // The window clipped to the padded input, for count_include_pad.
            const int64_t last = std::min(lo[d] + (g.kernel[d] - 1) * g.dil[d], g.in[d] + g.pad_end[d] - 1);
            hi[d] = last;
            padded *= (last - lo[d]) / g.dil[d] + 1;
          }
          for (int64_t iz = lo[0]; iz <= hi[0]; iz += g.dil[0])
            for (int64_t iy = lo[1]; iy <= hi[1]; iy += g.dil[1])
              for (int64_t ix = lo[2]; ix <= hi[2]; ix += g.dil[2]) {
                if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1] || ix < 0 || ix >= g.in[2]) continue;
                const int64_t at = (iz * g.in[1] + iy) * g.in[2] + ix;
                const T v = xp[at];
                ++count;
                sum += static_cast<double>(v);
                if (v > best || best_at < 0) {
                  best = v;
                  best_at = col_major ? (ix * g.in[1] + iy) * g.in[0] + iz : at;
                }
              }
          if (kind == PoolKind::max) {
            y[o] = best;
            if (indices) (*indices)[o] = p * is + best_at;
          } else {
            y[o] = static_cast<T>(sum / static_cast<double>(include_pad ? padded : count));
          }
        }
  }
}

Tensors run_pool(const OpContext& ctx, PoolKind kind) {
  const Tensor& x = ctx.required(0, "X");
  const PoolGeometry g = pool_geometry(ctx, x);
  const bool include_pad = attr_int(*ctx.node, "count_include_pad", 0) != 0;
  const bool col_major = attr_int(*ctx.node, "storage_order", 0) != 0;
  const std::vector<int64_t> dims = pooled_dims(x, g);
  Tensors out(static_cast<size_t>(std::max(1, ctx.output_count())));
  std::vector<int64_t> indices(static_cast<size_t>(product(dims)));
  const bool want_indices = kind == PoolKind::max && ctx.wants(1);
  if (!is_floating(x.dtype)) {
    // Integer MaxPool (8-bit types, 12+): exact in double.
    if (kind != PoolKind::max) fail(ErrorKind::unsupported, "AveragePool of {} is not supported", dtype_name(x.dtype));
    std::vector<double> y(static_cast<size_t>(product(dims)));
    pool(x.to_f64(), x.dims[0] * x.dims[1], g, kind, include_pad, y, want_indices ? &indices : nullptr, col_major);
    out[0] = Tensor::from_f64(x.dtype, dims, y);
  } else {
    with_float_type(x.dtype, "input 'X'", [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> vx = load_values<T>(x);
      std::vector<T> y(static_cast<size_t>(product(dims)));
      pool(vx, x.dims[0] * x.dims[1], g, kind, include_pad, y, want_indices ? &indices : nullptr, col_major);
      out[0] = make_tensor(x.dtype, dims, y);
      return 0;
    });
  }
  if (want_indices) {
    out[1] = Tensor(DType::int64, dims);
    std::copy(indices.begin(), indices.end(), out[1].data<int64_t>());
  }
  return out;
}

}  // namespace

Tensors op_max_pool(const OpContext& ctx) { return run_pool(ctx, PoolKind::max); }
Tensors op_average_pool(const OpContext& ctx) { return run_pool(ctx, PoolKind::average); }

Tensors op_global_average_pool(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dims.size() < 2) fail(ErrorKind::input, "input 'X' must have rank 2 or more, has shape {}", shape_str(x.dims));
  const int64_t planes = x.dims[0] * x.dims[1], s = product(x.dims, 2);
  std::vector<int64_t> dims(x.dims.size(), 1);
  dims[0] = x.dims[0];
  dims[1] = x.dims[1];
  const std::vector<double> v = x.to_f64();
  std::vector<double> y(static_cast<size_t>(planes), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < s; ++i) y[p] += v[p * s + i];
    y[p] /= static_cast<double>(s);
  }
  return {Tensor::from_f64(x.dtype, dims, y)};
}

}  // namespace bnorm::eval
