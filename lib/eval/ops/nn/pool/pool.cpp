// Pooling: MaxPool, AveragePool, LpPool (1-D to 3-D) and the global pools
// GlobalAveragePool, GlobalMaxPool, GlobalLpPool.
//
// Window geometry as Conv (kernel_shape, strides, pads, auto_pad,
// dilations), plus ceil_mode: the output size rounds up, but a window must
// start inside the input or its begin padding. AveragePool divides by the
// in-bounds count (count_include_pad = 0) or by the count inside the padded
// input (1). LpPool computes (sum |x|^p)^(1/p) over the in-bounds elements
// (padding adds 0). MaxPool's optional Indices are flat indices into X,
// spatial axes row-major (storage_order 0) or column-major (1).
// Versions: an attribute a version does not have is Error(input):
// AveragePool count_include_pad 7+, ceil_mode 10+, dilations 19+; MaxPool
// storage_order 8+, ceil_mode and dilations 10+; LpPool p is a float at 1
// and an int from 2, ceil_mode and dilations 18+; GlobalLpPool p float at
// 1, int from 2. Sums in float64, rounded once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/max_pool.h"
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "eval/ops/nn/pool/ops.h"

namespace bnorm::eval {

namespace {

constexpr size_t kDims = 3;

struct PoolGeometry {
  size_t nd = 0;
  int64_t in[kDims], kernel[kDims], out[kDims], stride[kDims], dil[kDims], pad[kDims], pad_end[kDims];
};

// The first version that has `attr`, for the pools whose attributes grew.
int attr_since(const std::string& op, const std::string& attr) {
  if (op == "AveragePool") return attr == "count_include_pad" ? 7 : attr == "ceil_mode" ? 10 : attr == "dilations" ? 19 : 1;
  if (op == "MaxPool") return attr == "storage_order" ? 8 : attr == "ceil_mode" || attr == "dilations" ? 10 : 1;
  if (op == "LpPool") return attr == "ceil_mode" || attr == "dilations" ? 18 : 1;
  return 1;
}

void check_attrs_of_version(const OpContext& ctx) {
  for (const char* a : {"count_include_pad", "ceil_mode", "dilations", "storage_order"}) {
    if (find_attr(*ctx.node, a) && ctx.version < attr_since(ctx.node->op_type(), a)) {
      fail(ErrorKind::input, "attribute '{}' is not part of {}-{}", a, ctx.node->op_type(), ctx.version);
    }
  }
}

PoolGeometry pool_geometry(const OpContext& ctx, const Tensor& x) {
  check_attrs_of_version(ctx);
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
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    fail(ErrorKind::input, "unknown auto_pad '{}'", auto_pad);
  }
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

enum class PoolKind { max, average, lp };

// Visits every output position of every plane with the in-bounds window
// elements; `f(plane, out_index, values...)` does the reduction.
struct PoolOptions {
  PoolKind kind = PoolKind::max;
  bool include_pad = false;
  bool col_major = false;
  double p = 2;
};

template <typename T>
void pool(const std::vector<T>& x, int64_t planes, const PoolGeometry& g, const PoolOptions& opt, std::vector<T>& y,
          std::vector<int64_t>* indices) {
  const PoolKind kind = opt.kind;
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
                sum += kind == PoolKind::lp ? std::pow(std::fabs(static_cast<double>(v)), opt.p) : static_cast<double>(v);
                if (v > best || best_at < 0) {
                  best = v;
                  best_at = opt.col_major ? (ix * g.in[1] + iy) * g.in[0] + iz : at;
                }
              }
          if (kind == PoolKind::max) {
            y[o] = best;
            if (indices) (*indices)[o] = p * is + best_at;
          } else if (kind == PoolKind::lp) {
            y[o] = static_cast<T>(std::pow(sum, 1 / opt.p));
          } else {
            y[o] = static_cast<T>(sum / static_cast<double>(opt.include_pad ? padded : count));
          }
        }
  }
}

// Window rows kernels::max_pool_stretch takes at once (taller windows: the loops below).
constexpr size_t kMaxWindowRows = 16;

// MaxPool without Indices on float or double data, 1-D or 2-D: the same
// comparisons as pool() in the same order (each output starts at its
// window's first in-bounds element, then takes every later one that is
// greater, so a NaN first stays and a NaN later is passed over), one
// window position at a time over a stretch of outputs whose windows lie
// inside the row, which GCC vectorizes (`v > m ? v : m` is MAXPS's own
// rule), or kernels::max_pool_stretch for float; outputs near the row's
// ends, whose windows are clipped, one by one.
template <typename T>
void max_pool_rows(const T* x, int64_t planes, const PoolGeometry& g, T* y) {
  const int64_t in_h = g.in[1], in_w = g.in[2], out_h = g.out[1], out_w = g.out[2];
  const int64_t sx = g.stride[2], dx = g.dil[2], px = g.pad[2], kw = g.kernel[2];
  // Outputs [a, b) read columns ox*sx - px + kx*dx inside [0, in_w) for every kx.
  const int64_t a = std::min(out_w, (px + sx - 1) / sx);
  const int64_t last = in_w - 1 + px - (kw - 1) * dx;  // ox*sx <= last
  const int64_t b = std::max(a, last < 0 ? 0 : std::min(out_w, last / sx + 1));
  auto one = [&](const T* xp, int64_t y0, int64_t y1, int64_t ox) {
    bool first = true;
    T best = -std::numeric_limits<T>::infinity();  // a window wholly in the padding
    for (int64_t iy = y0; iy <= y1; iy += g.dil[1]) {
      if (iy < 0 || iy >= in_h) continue;
      for (int64_t kx = 0; kx < kw; ++kx) {
        const int64_t ix = ox * sx - px + kx * dx;
        if (ix < 0 || ix >= in_w) continue;
        const T v = xp[iy * in_w + ix];
        if (first || v > best) best = v;
        first = false;
      }
    }
    return best;
  };
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * in_h * in_w;
    for (int64_t oy = 0; oy < out_h; ++oy) {
      T* yr = y + (p * out_h + oy) * out_w;
      const int64_t y0 = oy * g.stride[1] - g.pad[1];
      const int64_t y1 = std::min(y0 + (g.kernel[1] - 1) * g.dil[1], in_h + g.pad_end[1] - 1);
      for (int64_t ox = 0; ox < a; ++ox) yr[ox] = one(xp, y0, y1, ox);
      bool started = false, by_kernel = false;
      if constexpr (std::is_same_v<T, float>) {
        // The in-bounds window rows, each from its first read of output a.
        const float* rows[kMaxWindowRows];
        size_t nrows = 0;
        for (int64_t iy = y0; iy <= y1 && nrows < kMaxWindowRows; iy += g.dil[1]) {
          if (iy >= 0 && iy < in_h) rows[nrows++] = xp + iy * in_w - px + a * sx;
        }
        const bool fits = nrows < kMaxWindowRows || y1 < y0 + static_cast<int64_t>(kMaxWindowRows) * g.dil[1];
        if (fits && b > a && nrows > 0) {
          kernels::max_pool_stretch(rows, nrows, static_cast<size_t>(kw), static_cast<size_t>(dx),
                                    static_cast<size_t>(sx), static_cast<size_t>(b - a), yr + a);
          started = by_kernel = true;
        }
      }
      for (int64_t iy = y0; iy <= y1 && b > a && !by_kernel; iy += g.dil[1]) {
        if (iy < 0 || iy >= in_h) continue;
        const T* row = xp + iy * in_w - px;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const T* src = row + kx * dx;
          if (!started) {
            for (int64_t ox = a; ox < b; ++ox) yr[ox] = src[ox * sx];
            started = true;
            continue;
          }
          if (sx == 1) {
            for (int64_t ox = a; ox < b; ++ox) yr[ox] = src[ox] > yr[ox] ? src[ox] : yr[ox];
          } else {
            for (int64_t ox = a; ox < b; ++ox) yr[ox] = src[ox * sx] > yr[ox] ? src[ox * sx] : yr[ox];
          }
        }
      }
      for (int64_t ox = started ? b : a; ox < out_w; ++ox) yr[ox] = one(xp, y0, y1, ox);
    }
  }
}

// p of LpPool / GlobalLpPool: a float attribute at version 1, an int after.
double lp_order(const OpContext& ctx) {
  const double p = ctx.version < 2 ? attr_float(*ctx.node, "p", 2.0f)
                                   : static_cast<double>(attr_int(*ctx.node, "p", 2));
  if (!(p > 0) || std::isinf(p)) fail(ErrorKind::input, "p = {} must be positive", p);
  return p;
}

Tensors run_pool(const OpContext& ctx, PoolKind kind) {
  const Tensor& x = ctx.required(0, "X");
  const PoolGeometry g = pool_geometry(ctx, x);
  PoolOptions opt;
  opt.kind = kind;
  opt.include_pad = attr_int(*ctx.node, "count_include_pad", 0) != 0;
  opt.col_major = attr_int(*ctx.node, "storage_order", 0) != 0;
  if (kind == PoolKind::lp) opt.p = lp_order(ctx);
  const std::vector<int64_t> dims = pooled_dims(x, g);
  Tensors out(static_cast<size_t>(std::max(1, ctx.output_count())));
  const bool want_indices = kind == PoolKind::max && ctx.wants(1);
  std::vector<int64_t> indices(want_indices ? static_cast<size_t>(product(dims)) : 0);
  const bool rows = kind == PoolKind::max && !want_indices && g.nd <= 2 &&
                    (x.dtype == DType::float32 || x.dtype == DType::float64);
  if (rows) {
    out[0] = tensor_for_overwrite(x.dtype, dims);  // max_pool_rows writes every element
    if (x.dtype == DType::float32) {
      max_pool_rows(x.data<float>(), x.dims[0] * x.dims[1], g, out[0].data<float>());
    } else {
      max_pool_rows(x.data<double>(), x.dims[0] * x.dims[1], g, out[0].data<double>());
    }
  } else if (!is_floating(x.dtype)) {
    // Integer MaxPool (8-bit types, 12+): exact in double.
    if (kind != PoolKind::max) {
      fail(ErrorKind::unsupported, "{} of {} is not supported", ctx.node->op_type(), dtype_name(x.dtype));
    }
    std::vector<double> y(static_cast<size_t>(product(dims)));
    pool(x.to_f64(), x.dims[0] * x.dims[1], g, opt, y, want_indices ? &indices : nullptr);
    out[0] = Tensor::from_f64(x.dtype, dims, y);
  } else {
    with_float_type(x.dtype, "input 'X'", [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> vx = load_values<T>(x);
      std::vector<T> y(static_cast<size_t>(product(dims)));
      pool(vx, x.dims[0] * x.dims[1], g, opt, y, want_indices ? &indices : nullptr);
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

Tensors op_lp_pool(const OpContext& ctx) { return run_pool(ctx, PoolKind::lp); }

namespace {

// Reduces each (n, c) plane of X to one value: dims [N, C, 1, ...].
template <typename F>
Tensor global_pool(const OpContext& ctx, F reduce) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dims.size() < 2) fail(ErrorKind::input, "input 'X' must have rank 2 or more, has shape {}", shape_str(x.dims));
  if (!is_floating(x.dtype)) fail(ErrorKind::input, "input 'X' must be float, not {}", dtype_name(x.dtype));
  const int64_t planes = x.dims[0] * x.dims[1], s = product(x.dims, 2);
  std::vector<int64_t> dims(x.dims.size(), 1);
  dims[0] = x.dims[0];
  dims[1] = x.dims[1];
  const std::vector<double> v = x.to_f64();
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) y[p] = reduce(v.data() + p * s, s);
  return make_tensor(x.dtype, dims, y);
}

}  // namespace

Tensors op_global_average_pool(const OpContext& ctx) {
  return {global_pool(ctx, [](const double* v, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += v[i];
    return sum / static_cast<double>(n);
  })};
}

// NaN propagates, as np.max in ONNX's reference; an empty plane is -inf.
Tensors op_global_max_pool(const OpContext& ctx) {
  return {global_pool(ctx, [](const double* v, int64_t n) {
    double best = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) best = std::isnan(v[i]) || std::isnan(best) ? NAN : std::max(best, v[i]);
    return best;
  })};
}

Tensors op_global_lp_pool(const OpContext& ctx) {
  const double p = lp_order(ctx);
  return {global_pool(ctx, [p](const double* v, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::pow(std::fabs(v[i]), p);
    return std::pow(sum, 1 / p);
  })};
}

}  // namespace bnorm::eval
