#include "eval/report/codes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace bnorm {

namespace {

// DynamicQuantizeLinear's scale and zero point of x, in float as the
// evaluator computes them (eval/ops/quantization/quant.cpp).
std::pair<float, float> dynamic_params(const std::vector<double>& x) {
  float lo = 0, hi = 0;
  for (double v : x) {
    lo = std::min(lo, static_cast<float>(v));
    hi = std::max(hi, static_cast<float>(v));
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float initial = 0.0f - lo / scale;
  const float zp = std::isnan(initial) ? 0.0f : std::nearbyint(std::min(std::max(initial, 0.0f), 255.0f));
  return {scale, zp};
}

// x / s as the quantizer divides: in float for float inputs.
double divide(double x, double s, bool in_float) {
  return in_float ? static_cast<double>(static_cast<float>(x) / static_cast<float>(s)) : x / s;
}

}  // namespace

void CodeDiff::merge(const CodeDiff& o) {
  if (first < 0 && o.first >= 0) {
    first = o.first;
    code_a = o.code_a;
    code_b = o.code_b;
    position_a = o.position_a;
    position_b = o.position_b;
  }
  elements += o.elements;
  differ += o.differ;
  max_steps = std::max(max_steps, o.max_steps);
  straddling += o.straddling;
  analysed = analysed && o.analysed;
  inputs_inside = inputs_inside && o.inputs_inside;
}

CodeDiff code_diff(const Tensor& a, const Tensor& b, const Tensor* x_a, const Tensor* x_b, const QuantParams& q) {
  CodeDiff c;
  c.elements = a.numel();
  if (a.dims != b.dims || a.dtype != b.dtype) return c;
  const auto ca = a.to_f64();
  const auto cb = b.to_f64();
  std::vector<double> xa, xb, sa, za;
  float dyn_scale_a = 0, dyn_zp_a = 0, dyn_scale_b = 0, dyn_zp_b = 0;
  const bool in_float = x_a && x_a->dtype == DType::float32;
  int64_t inner = 1, channels = 1;
  c.analysed = x_a && x_b && x_a->dims == a.dims && x_b->dims == a.dims && (q.dynamic || q.scale);
  if (c.analysed) {
    xa = x_a->to_f64();
    xb = x_b->to_f64();
    if (q.dynamic) {
      std::tie(dyn_scale_a, dyn_zp_a) = dynamic_params(xa);
      std::tie(dyn_scale_b, dyn_zp_b) = dynamic_params(xb);
    } else {
      sa = q.scale->to_f64();
      za = q.zero_point ? q.zero_point->to_f64() : std::vector<double>(sa.size(), 0.0);
      const int64_t rank = static_cast<int64_t>(a.dims.size());
      const int64_t axis = q.axis < 0 ? q.axis + rank : q.axis;
      if (sa.size() > 1) {
        if (axis < 0 || axis >= rank || a.dims[axis] != static_cast<int64_t>(sa.size()) || za.size() != sa.size()) {
          c.analysed = false;  // blocked or unusual layouts: no analysis
        } else {
          channels = a.dims[axis];
          for (int64_t k = axis + 1; k < rank; ++k) inner *= a.dims[k];
        }
      }
      if (sa.empty() || za.empty()) c.analysed = false;
    }
  }
  for (size_t i = 0; i < ca.size(); ++i) {
    if (ca[i] == cb[i]) continue;
    ++c.differ;
    const int64_t steps = static_cast<int64_t>(std::fabs(ca[i] - cb[i]));
    c.max_steps = std::max(c.max_steps, steps);
    double pa = std::numeric_limits<double>::quiet_NaN(), pb = pa;
    if (c.analysed) {
      if (q.dynamic) {
        pa = divide(xa[i], dyn_scale_a, true) + dyn_zp_a;
        pb = divide(xb[i], dyn_scale_b, true) + dyn_zp_b;
      } else {
        const size_t k = sa.size() > 1 ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels) : 0;
        pa = divide(xa[i], sa[k], in_float) + za[k];
        pb = divide(xb[i], sa[k], in_float) + za[k];
      }
      const double boundary = std::min(ca[i], cb[i]) + 0.5;
      if (steps == 1 && (pa - boundary) * (pb - boundary) <= 0 && (ca[i] < cb[i]) == (pa <= pb)) ++c.straddling;
    }
    if (c.first < 0) {
      c.first = static_cast<int64_t>(i);
      c.code_a = static_cast<int64_t>(ca[i]);
      c.code_b = static_cast<int64_t>(cb[i]);
      c.position_a = pa;
      c.position_b = pb;
    }
  }
  return c;
}

std::string code_text(const CodeDiff& c) {
  if (!c.differ) return fmt::format("all {} codes equal", c.elements);
  std::string text = fmt::format("{} of {} codes differ (at most {} step{})", c.differ, c.elements, c.max_steps,
                                 c.max_steps == 1 ? "" : "s");
  if (c.analysed && !c.inputs_inside) {
    text += ", after a float input outside the criterion";
  } else if (c.rounding()) {
    text += ", each by one step where A's and B's float inputs straddle a rounding boundary";
  } else if (c.analysed) {
    text += fmt::format(", {} of them one-step flips where the float inputs straddle a rounding boundary", c.straddling);
  }
  text += fmt::format(" (first: element {}, code {} in A, {} in B", c.first, c.code_a, c.code_b);
  if (std::isfinite(c.position_a)) {
    text += fmt::format(", inputs at {:.9g} and {:.9g} code units", c.position_a, c.position_b);
  }
  return text + ")";
}

}  // namespace bnorm
