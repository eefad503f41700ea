// Resampling along each axis, the engine of Resize and Upsample.
//
// Every axis maps output index x to an input coordinate x_ori by the
// coordinate transformation (ONNX Resize's formulas), writes f = ceil(x_ori)
// - 1 and r = x_ori - f in (0, 1] (an integral x_ori reads its own sample
// with weight 1, as ONNX's reference does), and reads a few taps around f:
//   nearest  one tap, f or f + 1 by nearest_mode;
//   linear   f, f + 1 with weights 1 - r, r;
//   cubic    f - 1 .. f + 2 with Keys' kernel W(d) of coefficient a;
//   antialias (linear, cubic): the kernel stretched by 1 / min(scale, 1),
//            taps f + start .. f + 1 - start, weights normalized to sum 1.
// Taps outside the axis read the edge sample (exclude_outside instead drops
// them and renormalizes). With tf_crop_and_resize an x_ori outside
// [0, in - 1] on any axis makes the element extrapolation_value.
// N-linear and N-cubic are the tensor products of these 1-D filters, so the
// passes run one axis at a time in float64; nearest moves elements of any
// type without arithmetic.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/resize/resize.h"

namespace bnorm::eval::resize {

namespace {

struct AxisMap {
  std::vector<int64_t> first{0};  // taps of output i: [first[i], first[i + 1])
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<int64_t> outside;  // outputs that take extrapolation_value
};

double source_coordinate(const Spec& s, int64_t i, int64_t in, const AxisTarget& t) {
  const auto x = static_cast<double>(i);
  const double scale = t.scale, len = t.length, span = static_cast<double>(in - 1);
  const std::string& m = s.transform;
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double offset = static_cast<double>(in) / 2 * (1 - static_cast<double>(t.out) / len);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (m == "pytorch_half_pixel") return len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "align_corners") return len > 1 ? x * span / (len - 1) : 0.0;
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "tf_crop_and_resize") {
    if (len > 1) return t.roi_lo * span + x * (t.roi_hi - t.roi_lo) * span / (len - 1);
    return 0.5 * (t.roi_lo + t.roi_hi) * span;
  }
  fail(ErrorKind::input, "unknown coordinate_transformation_mode '{}'", m);
}

// The weights of taps f + start, f + start + 1, ...; returns start.
int64_t tap_weights(const Spec& s, double r, double scale, std::vector<double>& w) {
  w.clear();
  if (s.mode == Interp::nearest) {
    bool up = false;
    if (s.nearest == "round_prefer_floor") up = r > 0.5;
    else if (s.nearest == "round_prefer_ceil") up = r >= 0.5;
    else if (s.nearest == "floor") up = r == 1;
    else if (s.nearest == "ceil") up = true;
    else if (s.nearest == "simple") up = scale < 1 || r == 1;
    else fail(ErrorKind::input, "unknown nearest_mode '{}'", s.nearest);
    w.push_back(1);
    return up ? 1 : 0;
  }
  const bool linear = s.mode == Interp::linear;
  if (!s.antialias) {
    if (linear) w = {1 - r, r};
    else w = {cubic_keys(1 + r, s.cubic_a), cubic_keys(r, s.cubic_a), cubic_keys(1 - r, s.cubic_a), cubic_keys(2 - r, s.cubic_a)};
    return linear ? 0 : -1;
  }
  const double sc = std::min(scale, 1.0);
  const auto start = static_cast<int64_t>(std::floor((linear ? -1.0 : -2.0) / sc) + 1);
  double sum = 0;
  for (int64_t k = start; k <= 1 - start; ++k) {
    const double d = std::fabs((static_cast<double>(k) - r) * sc);
    w.push_back(linear ? std::max(0.0, 1 - d) : cubic_keys(d, s.cubic_a));
    sum += w.back();
  }
  for (double& v : w) v /= sum;
  return start;
}

AxisMap plan_axis(const Spec& s, int64_t in, const AxisTarget& t) {
  AxisMap m;
  const bool crop = s.transform == "tf_crop_and_resize";
  std::vector<double> w;
  for (int64_t i = 0; i < t.out; ++i) {
    double x = source_coordinate(s, i, in, t);
    if (std::isnan(x)) fail(ErrorKind::input, "a resize coordinate is NaN (scale, roi or sizes)");
    if (crop && (x < 0 || x > static_cast<double>(in - 1))) {
      m.outside.push_back(i);
      m.first.push_back(static_cast<int64_t>(m.index.size()));
      continue;
    }
    // Valid targets keep x_ori within [-0.5, in - 0.5]; the clamp only
    // keeps the integer conversion defined.
    x = std::clamp(x, -1.0, static_cast<double>(in));
    const double f = std::ceil(x) - 1;
    const int64_t start = tap_weights(s, x - f, t.scale, w);
    const size_t at = m.index.size();
    double kept = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      const int64_t j = static_cast<int64_t>(f) + start + static_cast<int64_t>(k);
      const bool inside = j >= 0 && j < in;
      m.index.push_back(std::clamp<int64_t>(j, 0, in - 1));
      m.weight.push_back(s.exclude_outside && !inside ? 0.0 : w[k]);
      kept += m.weight.back();
    }
    if (s.exclude_outside && kept != 0) {
      for (size_t k = at; k < m.weight.size(); ++k) m.weight[k] /= kept;
    }
    m.first.push_back(static_cast<int64_t>(m.index.size()));
  }
  return m;
}

bool is_identity(const AxisMap& m, int64_t in) {
  if (!m.outside.empty() || static_cast<int64_t>(m.first.size()) != in + 1) return false;
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t t = m.first[i]; t < m.first[i + 1]; ++t) {
      if (m.weight[t] != (m.index[t] == i ? 1.0 : 0.0)) return false;
    }
  }
  return true;
}

// One pass: axis k of `v` (shape `dims`) resampled by m into m's length.
std::vector<double> pass(const std::vector<double>& v, std::vector<int64_t>& dims, size_t k, const AxisMap& m) {
  const int64_t outer = product(dims, 0, k), inner = product(dims, k + 1), in = dims[k];
  const auto out = static_cast<int64_t>(m.first.size()) - 1;
  dims[k] = out;
  std::vector<double> y(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "resize buffer")), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* src = v.data() + o * in * inner;
    double* dst = y.data() + o * out * inner;
    for (int64_t j = 0; j < out; ++j) {
      for (int64_t t = m.first[j]; t < m.first[j + 1]; ++t) {
        const double w = m.weight[t];
        if (w == 0) continue;
        const double* row = src + m.index[t] * inner;
        for (int64_t i = 0; i < inner; ++i) dst[j * inner + i] += w * row[i];
      }
    }
  }
  return y;
}

void extrapolate(std::vector<double>& y, const std::vector<int64_t>& dims, size_t k, const AxisMap& m, double e) {
  const int64_t outer = product(dims, 0, k), inner = product(dims, k + 1), n = dims[k];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : m.outside) std::fill_n(y.begin() + (o * n + j) * inner, inner, e);
  }
}

}  // namespace

Tensor resample(const Tensor& x, const Spec& s, const std::vector<AxisTarget>& axes) {
  const size_t rank = x.dims.size();
  if (axes.size() != rank) fail(ErrorKind::input, "{} resize targets for an input of rank {}", axes.size(), rank);
  std::vector<int64_t> out_dims(rank);
  for (size_t k = 0; k < rank; ++k) {
    out_dims[k] = axes[k].out;
    if (x.dims[k] == 0 && axes[k].out != 0) fail(ErrorKind::input, "axis {} is empty and cannot grow to {}", k, axes[k].out);
  }
  if (checked_buffer_numel(out_dims, std::max<size_t>(dtype_size(x.dtype), 1), "resize output") == 0) {
    return Tensor(x.dtype, out_dims);
  }
  std::vector<AxisMap> maps(rank);
  for (size_t k = 0; k < rank; ++k) maps[k] = plan_axis(s, x.dims[k], axes[k]);
  if (s.mode == Interp::nearest) {
    std::vector<std::vector<int64_t>> index(rank);
    for (size_t k = 0; k < rank; ++k) {
      index[k].assign(maps[k].first.size() - 1, -1);
      for (size_t j = 0; j + 1 < maps[k].first.size(); ++j) {
        if (maps[k].first[j] < maps[k].first[j + 1]) index[k][j] = maps[k].index[maps[k].first[j]];
      }
    }
    return remap(x, index, make_any<double>(x.dtype, {}, {s.extrapolation}).bytes);
  }
  if (x.dtype == DType::boolean) fail(ErrorKind::unsupported, "linear or cubic resize of bool is not supported");
  std::vector<double> v = x.to_f64();
  std::vector<int64_t> dims = x.dims;
  for (size_t k = 0; k < rank; ++k) {
    if (is_identity(maps[k], x.dims[k])) continue;
    v = pass(v, dims, k, maps[k]);
  }
  for (size_t k = 0; k < rank; ++k) extrapolate(v, dims, k, maps[k], s.extrapolation);
  return make_any<double>(x.dtype, dims, v);
}

}  // namespace bnorm::eval::resize
