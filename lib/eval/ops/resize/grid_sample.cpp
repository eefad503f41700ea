// GridSample (16, 20, 22) and AffineGrid (20).
//
// GridSample: Y[n, c, p] samples X[n, c] at the normalized location
// grid[n, p, :] (listed innermost axis first). Each spatial axis of length d
// maps v in [-1, 1] to x = (v + 1) / 2 * (d - 1) (align_corners) or
// ((v + 1) * d - 1) / 2, the border being [0, d - 1] or [-0.5, d - 0.5].
// nearest rounds x half to even first. An x outside the border is clamped
// to [0, d - 1] (border) or reflected into it (reflection, repeatedly).
// Then linear reads floor(x), +1 with weights 1 - r, r; cubic reads
// floor(x) - 1 .. + 2 with Keys' kernel, a = -0.75; the N-D modes are the
// tensor products. A tap outside the axis reads 0 (zeros), the edge
// (border) or its reflection. Versions: 16 is 4-D only with modes
// bilinear/nearest/bicubic; 20 is N-D with modes linear/nearest/cubic; 22
// adds bfloat16. These are ONNX's reference semantics; values in float64,
// integer X truncated toward zero at the end (the spec: "computed as
// floating point and cast to integer at the end"). A non-finite grid value
// is Error(input): no location can be read for it.
//
// AffineGrid: grid[n, ..., :] = theta[n] * (x, y[, z], 1) over positions
// evenly spaced in [-1, 1] per axis: linspace(-1, 1, L) with
// align_corners, else the pixel centers (2i + 1) / L - 1. A length-1 axis
// with align_corners sits at 0 (PyTorch's choice; the spec's corners
// coincide there).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/resize/ops.h"

namespace bnorm::eval {

namespace {

enum class Mode { nearest, linear, cubic };
enum class Padding { zeros, border, reflection };

struct GridSpec {
  Mode mode = Mode::linear;
  Padding padding = Padding::zeros;
  bool align = false;
};

GridSpec grid_spec(const OpContext& ctx) {
  const auto& n = *ctx.node;
  const bool old = ctx.version < 20;
  GridSpec g;
  const std::string mode = attr_string(n, "mode", old ? "bilinear" : "linear");
  if (mode == "nearest") g.mode = Mode::nearest;
  else if (mode == (old ? "bilinear" : "linear")) g.mode = Mode::linear;
  else if (mode == (old ? "bicubic" : "cubic")) g.mode = Mode::cubic;
  else fail(ErrorKind::input, "'{}' is not a mode of GridSample-{}", mode, ctx.version);
  const std::string pad = attr_string(n, "padding_mode", "zeros");
  if (pad == "zeros") g.padding = Padding::zeros;
  else if (pad == "border") g.padding = Padding::border;
  else if (pad == "reflection") g.padding = Padding::reflection;
  else fail(ErrorKind::input, "unknown padding_mode '{}'", pad);
  g.align = attr_int(n, "align_corners", 0) != 0;
  return g;
}

// x reflected by the borders lo and hi until it lies between them.
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  if (x >= lo && x <= hi) return x;
  const bool below = x < lo;
  const double dx = below ? lo - x : x - hi;
  const double times = std::floor(dx / range);
  const double rest = dx - times * range;
  const bool even = std::fmod(times, 2.0) == 0;
  return below == even ? lo + rest : hi - rest;
}

struct Taps {
  int64_t index[4];  // -1: a zero tap
  double weight[4];
  int count = 0;
};

// The taps one axis of length d reads for normalized coordinate v.
Taps axis_taps(const GridSpec& g, double v, int64_t d) {
  if (!std::isfinite(v)) fail(ErrorKind::input, "grid value {} is not finite", v);
  const double lo = g.align ? 0.0 : -0.5, hi = g.align ? static_cast<double>(d - 1) : static_cast<double>(d) - 0.5;
  double x = g.align ? (v + 1) / 2 * static_cast<double>(d - 1) : ((v + 1) * static_cast<double>(d) - 1) / 2;
  if (g.mode == Mode::nearest) x = std::nearbyint(x);
  if (x < lo || x > hi) {
    if (g.padding == Padding::border) x = std::clamp(x, 0.0, static_cast<double>(d - 1));
    if (g.padding == Padding::reflection) x = reflect(x, lo, hi);
  }
  // Far outside only zero taps remain; the bound keeps int64 conversion defined.
  x = std::clamp(x, -1e15, 1e15);
  auto fetch = [&](double i) -> int64_t {
    if (i >= 0 && i < static_cast<double>(d)) return static_cast<int64_t>(i);
    if (g.padding == Padding::zeros) return -1;
    if (g.padding == Padding::border) return i < 0 ? 0 : d - 1;
    return std::clamp<int64_t>(static_cast<int64_t>(reflect(i, lo, hi)), 0, d - 1);
  };
  Taps t;
  if (g.mode == Mode::nearest) {
    t.index[0] = fetch(std::trunc(x));
    t.weight[0] = 1;
    t.count = 1;
    return t;
  }
  const double x0 = std::floor(x), r = x - x0;
  if (g.mode == Mode::linear) {
    t = {{fetch(x0), fetch(x0 + 1)}, {1 - r, r}, 2};
    return t;
  }
  for (int k = 0; k < 4; ++k) {
    t.index[k] = fetch(x0 - 1 + k);
    t.weight[k] = cubic_keys(r - (k - 1), -0.75);
  }
  t.count = 4;
  return t;
}

struct Source {
  int64_t offset;  // within one (n, c) plane
  double weight;
};

// Every (offset, weight) one output location reads: the tensor product of
// the axes' taps, zero taps left out.
void location_sources(const std::vector<Taps>& taps, const std::vector<int64_t>& stride, std::vector<Source>& out) {
  out.clear();
  const size_t r = taps.size();
  std::vector<int> at(r, 0);
  while (true) {
    int64_t offset = 0;
    double w = 1;
    bool zero = false;
    for (size_t k = 0; k < r; ++k) {
      const int64_t i = taps[k].index[at[k]];
      zero = zero || i < 0;
      offset += i * stride[k];
      w *= taps[k].weight[at[k]];
    }
    if (!zero) out.push_back({offset, w});
    size_t k = r;
    while (k-- > 0 && ++at[k] == taps[k].count) at[k] = 0;
    if (k == SIZE_MAX) return;
  }
}

}  // namespace

Tensors op_grid_sample(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& grid = ctx.required(1, "grid");
  const GridSpec g = grid_spec(ctx);
  const size_t rank = x.dims.size();
  if (ctx.version < 20 ? rank != 4 : rank < 3) {
    fail(ErrorKind::input, "X of GridSample-{} cannot have shape {}", ctx.version, shape_str(x.dims));
  }
  const size_t r = rank - 2;
  // Each location reads taps^r samples; more than 4096 is refused rather than run for hours.
  const int per_axis = g.mode == Mode::cubic ? 4 : g.mode == Mode::linear ? 2 : 1;
  if (per_axis > 1 && static_cast<double>(r) * std::log2(per_axis) > 12) {
    fail(ErrorKind::unsupported, "GridSample over {} spatial axes is not supported", r);
  }
  if (grid.dims.size() != rank || grid.dims[0] != x.dims[0] || grid.dims[rank - 1] != static_cast<int64_t>(r)) {
    fail(ErrorKind::input, "grid {} does not fit X {}", shape_str(grid.dims), shape_str(x.dims));
  }
  if (!is_floating(grid.dtype)) fail(ErrorKind::input, "grid must be float, not {}", dtype_name(grid.dtype));
  if (g.mode != Mode::nearest && x.dtype == DType::boolean) {
    fail(ErrorKind::unsupported, "interpolating bool is not supported");
  }
  const int64_t n_batch = x.dims[0], channels = x.dims[1];
  std::vector<int64_t> in(x.dims.begin() + 2, x.dims.end()), out_dims{n_batch, channels};
  out_dims.insert(out_dims.end(), grid.dims.begin() + 1, grid.dims.end() - 1);
  Tensor y(x.dtype, out_dims);
  const int64_t plane = product(in), locations = product(out_dims, 2);
  if (plane == 0 && y.numel() > 0) fail(ErrorKind::input, "X {} has an empty spatial axis", shape_str(x.dims));
  std::vector<int64_t> stride(r, 1);
  for (size_t k = r - 1; k-- > 0;) stride[k] = stride[k + 1] * in[k + 1];
  const std::vector<double> gv = grid.to_f64();
  const bool interpolate = g.mode != Mode::nearest;
  const std::vector<double> xv = interpolate ? x.to_f64() : std::vector<double>{};
  std::vector<double> yv(interpolate ? static_cast<size_t>(y.numel()) : 0);
  const size_t es = dtype_size(x.dtype);
  std::vector<Taps> taps(r);
  std::vector<Source> src;
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t p = 0; p < locations; ++p) {
      const double* loc = gv.data() + (n * locations + p) * static_cast<int64_t>(r);
      for (size_t k = 0; k < r; ++k) taps[k] = axis_taps(g, loc[r - 1 - k], in[k]);
      location_sources(taps, stride, src);
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t plane_at = (n * channels + c) * plane, o = (n * channels + c) * locations + p;
        if (interpolate) {
          double s = 0;
          for (const Source& e : src) s += e.weight * xv[plane_at + e.offset];
          yv[o] = s;
        } else if (!src.empty()) {
          std::memcpy(y.bytes.data() + o * es, x.bytes.data() + (plane_at + src[0].offset) * es, es);
        }
      }
    }
  }
  if (interpolate) store_any(y, yv.data());
  return one_tensor(std::move(y));
}

Tensors op_affine_grid(const OpContext& ctx) {
  const Tensor& theta = ctx.required(0, "theta");
  const std::vector<int64_t> size = read_ints(ctx.required(1, "size"), "size");
  if (size.size() != 4 && size.size() != 5) fail(ErrorKind::input, "'size' must have 4 or 5 values, has {}", size.size());
  const auto r = static_cast<int64_t>(size.size()) - 2;
  if (theta.dims != std::vector<int64_t>{size[0], r, r + 1}) {
    fail(ErrorKind::input, "theta {} does not fit size {}", shape_str(theta.dims), shape_str(size));
  }
  if (!is_floating(theta.dtype)) fail(ErrorKind::input, "theta must be float, not {}", dtype_name(theta.dtype));
  const bool align = attr_int(*ctx.node, "align_corners", 0) != 0;
  std::vector<int64_t> dims{size[0]};
  dims.insert(dims.end(), size.begin() + 2, size.end());
  dims.push_back(r);
  Tensor out(theta.dtype, dims);
  // Base positions per spatial axis, outermost first.
  std::vector<std::vector<double>> base(static_cast<size_t>(r));
  for (int64_t k = 0; k < r; ++k) {
    const int64_t len = size[2 + k];
    for (int64_t i = 0; i < len; ++i) {
      const auto fi = static_cast<double>(i), fl = static_cast<double>(len);
      base[k].push_back(align ? (len > 1 ? -1 + 2 * fi / (fl - 1) : 0.0) : (2 * fi + 1) / fl - 1);
    }
  }
  const std::vector<double> th = theta.to_f64();
  const int64_t points = product(size, 2);
  std::vector<double> v(static_cast<size_t>(out.numel()));
  std::vector<double> pos(static_cast<size_t>(r));
  for (int64_t n = 0; n < size[0]; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      // pos = (x, y[, z]): the innermost axis first.
      int64_t rest = p;
      for (int64_t k = r; k-- > 0;) {
        pos[static_cast<size_t>(r - 1 - k)] = base[k][rest % size[2 + k]];
        rest /= size[2 + k];
      }
      for (int64_t i = 0; i < r; ++i) {
        const double* row = th.data() + (n * r + i) * (r + 1);
        double s = row[r];
        for (int64_t j = 0; j < r; ++j) s += row[j] * pos[j];
        v[(n * points + p) * r + i] = s;
      }
    }
  }
  store_values(out, v.data());
  return one_tensor(std::move(out));
}

}  // namespace bnorm::eval
