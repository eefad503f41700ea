#include "eval/report/rounding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace bnorm {

namespace {

bool is_real(DType t) {
  return is_floating(t) || is_float8(t) || t == DType::float8e8m0 || t == DType::float4e2m1;
}

// Nearest rank: the smallest value with at least p of the elements at or below it.
double quantile(std::vector<double>& e, double p) {
  if (e.empty()) return 0;
  const size_t k = std::min(e.size() - 1, static_cast<size_t>(std::ceil(p * static_cast<double>(e.size()))) - 1);
  std::nth_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(k), e.end());
  return e[k];
}

ErrorStats stats_of(std::vector<double> e) {
  ErrorStats s;
  if (e.empty()) return s;
  double sum = 0;
  for (double x : e) sum += x;
  s.mean = sum / static_cast<double>(e.size());
  s.max = *std::max_element(e.begin(), e.end());
  s.p99 = quantile(e, 0.99);
  s.p90 = quantile(e, 0.90);
  s.median = quantile(e, 0.5);
  return s;
}

// The same non-finite value (NaN and NaN, or the same infinity).
bool same_nonfinite(double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; }

std::string shape_problem(const Tensor& a, const Tensor& b) {
  if (a.dims != b.dims) return fmt::format("shape {} != {}", shape_str(b.dims), shape_str(a.dims));
  if (a.dtype != b.dtype) return fmt::format("type {} != {}", dtype_name(b.dtype), dtype_name(a.dtype));
  return {};
}

}  // namespace

void ErrorStats::merge(const ErrorStats& o) {
  median = std::max(median, o.median);
  p90 = std::max(p90, o.p90);
  p99 = std::max(p99, o.p99);
  max = std::max(max, o.max);
  mean = std::max(mean, o.mean);
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::float32: return std::ldexp(1.0, -24);
    case DType::float64: return std::ldexp(1.0, -53);
    case DType::float16: return std::ldexp(1.0, -11);
    case DType::bfloat16: return std::ldexp(1.0, -8);
    default: return 0;
  }
}

namespace {

// ErrorStats of |x - ref| over pairs where both are finite.
ErrorStats error_stats_of(const std::vector<double>& xv, const std::vector<double>& rv) {
  std::vector<double> e;
  e.reserve(xv.size());
  for (size_t i = 0; i < xv.size() && i < rv.size(); ++i) {
    if (std::isfinite(xv[i]) && std::isfinite(rv[i])) e.push_back(std::fabs(xv[i] - rv[i]));
  }
  return stats_of(std::move(e));
}

}  // namespace

ErrorStats error_stats(const Tensor& x, const Tensor& ref) { return error_stats_of(x.to_f64(), ref.to_f64()); }

void RoundingDiff::merge(const RoundingDiff& o) {
  pass = pass && o.pass;
  a.merge(o.a);
  b.merge(o.b);
  floor = std::max(floor, o.floor);
  channel_a = std::max(channel_a, o.channel_a);
  channel_b = std::max(channel_b, o.channel_b);
  if (o.worst > worst) {
    worst = o.worst;
    worst_at = o.worst_at;
  }
  outside += o.outside;
  elements += o.elements;
  if (problem.empty()) problem = o.problem;
}

RoundingDiff judge_rounding(const Tensor& a, const Tensor& a64, const Tensor& b) {
  RoundingDiff d;
  d.elements = b.numel();
  d.problem = shape_problem(a, b);
  if (d.problem.empty() && a64.dims != a.dims) d.problem = "the float64 evaluation has another shape";
  if (!d.problem.empty()) {
    d.pass = false;
    d.worst = std::numeric_limits<double>::infinity();
    return d;
  }
  const auto av = a.to_f64();
  const auto rv = a64.to_f64();
  const auto bv = b.to_f64();
  if (!is_real(a.dtype)) {
    // Discrete values: B must equal A or A64 at every element.
    for (size_t i = 0; i < bv.size(); ++i) d.outside += bv[i] != av[i] && bv[i] != rv[i];
    d.b = error_stats_of(bv, rv);
    d.a = error_stats_of(av, rv);
    d.worst_at = "elements";
    d.worst = d.outside ? std::numeric_limits<double>::infinity() : 0;
    d.pass = d.outside == 0;
    return d;
  }
  // Signed errors summed per index of axis 1 (rank >= 3, >= 16 elements each).
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  const int64_t channels = rank >= 3 ? a.dims[1] : 0;
  int64_t inner = 1;
  for (int64_t k = 2; k < rank; ++k) inner *= a.dims[k];
  const bool by_channel = channels > 0 && inner * a.dims[0] >= 16;
  std::vector<double> sum_a(by_channel ? channels : 0), sum_b(sum_a.size());
  std::vector<int64_t> count(sum_a.size());
  std::vector<double> ea, eb;
  ea.reserve(av.size());
  eb.reserve(av.size());
  double scale = 0;
  int64_t nonfinite = 0;
  for (size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], r = rv[i], y = bv[i];
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
    if (std::isfinite(x) && std::isfinite(r) && std::isfinite(y)) {
      ea.push_back(std::fabs(x - r));
      eb.push_back(std::fabs(y - r));
      if (by_channel) {
        const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
        sum_a[c] += x - r;
        sum_b[c] += y - r;
        ++count[c];
      }
    } else if (!std::isfinite(y)) {
      nonfinite += !same_nonfinite(y, x) && !same_nonfinite(y, r);  // B's NaN or infinity must be A's or A64's
    } else if (!std::isfinite(r)) {
      nonfinite += x != y;  // A64 has no finite value here: B must be A
    }
    // else A alone overflowed (A64 and B finite): B is no worse than A there.
  }
  const double unit = unit_roundoff(a.dtype) ? unit_roundoff(a.dtype) : 0.125;
  d.floor = kRoundingFloor * unit * scale;
  const double max_a = ea.empty() ? 0 : *std::max_element(ea.begin(), ea.end());
  const double limit = kRoundingMargin * max_a + d.floor;
  for (double e : eb) d.outside += e > limit;
  d.outside += nonfinite;
  d.a = stats_of(std::move(ea));
  d.b = stats_of(std::move(eb));
  for (size_t c = 0; c < count.size(); ++c) {
    if (!count[c]) continue;
    d.channel_a = std::max(d.channel_a, std::fabs(sum_a[c]) / static_cast<double>(count[c]));
    d.channel_b = std::max(d.channel_b, std::fabs(sum_b[c]) / static_cast<double>(count[c]));
  }
  const std::pair<const char*, std::pair<double, double>> at[] = {
      {"median", {d.a.median, d.b.median}}, {"p90", {d.a.p90, d.b.p90}}, {"p99", {d.a.p99, d.b.p99}},
      {"max", {d.a.max, d.b.max}},          {"channel mean", {d.channel_a, d.channel_b}}};
  for (const auto& [name, ab] : at) {
    const double allowed = kRoundingMargin * ab.first + d.floor;
    const double got = ab.second;
    const double r = got == 0 ? 0 : allowed > 0 ? got / allowed : std::numeric_limits<double>::infinity();
    if (r > d.worst || d.worst_at.empty()) {
      d.worst = std::max(d.worst, r);
      d.worst_at = name;
    }
  }
  if (nonfinite) {
    d.worst = std::numeric_limits<double>::infinity();
    d.worst_at = "non-finite";
  }
  d.pass = d.worst <= 1;
  return d;
}

void ScaledDiff::merge(const ScaledDiff& o) {
  pass = pass && o.pass;
  error.merge(o.error);
  scale = std::max(scale, o.scale);
  allowed = std::max(allowed, o.allowed);
  outside += o.outside;
  elements += o.elements;
  if (problem.empty()) problem = o.problem;
}

double scaled_tolerance(DType t) {
  if (t == DType::float16 || t == DType::bfloat16) return 1e-2;
  if (is_float8(t) || t == DType::float8e8m0 || is_4bit(t) || is_2bit(t)) return 0.25;
  return 1e-3;
}

double stat_of(const ErrorStats& s, const std::string& stat) {
  if (stat == "median") return s.median;
  if (stat == "p90") return s.p90;
  if (stat == "p99") return s.p99;
  if (stat == "max") return s.max;
  if (stat == "mean") return s.mean;
  throw Error(ErrorKind::usage, fmt::format("--error-stat {}: not a statistic; use median, p90, p99, max or mean", stat));
}

ScaledDiff judge_scaled(const Tensor& a, const Tensor& b, const std::string& stat, double rel) {
  ScaledDiff d;
  d.stat = stat;
  d.rel = rel;
  d.elements = b.numel();
  d.problem = shape_problem(a, b);
  if (!d.problem.empty()) {
    d.pass = false;
    return d;
  }
  const auto av = a.to_f64();
  const auto bv = b.to_f64();
  std::vector<double> e;
  e.reserve(av.size());
  for (size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], y = bv[i];
    if (std::isfinite(x)) d.scale = std::max(d.scale, std::fabs(x));
    if (std::isfinite(x) && std::isfinite(y)) {
      if (!is_real(a.dtype)) d.outside += x != y;
      e.push_back(std::fabs(x - y));
    } else {
      d.outside += !same_nonfinite(x, y);
    }
  }
  d.error = stats_of(std::move(e));
  d.allowed = rel * d.scale;
  d.pass = d.outside == 0 && stat_of(d.error, stat) <= d.allowed;
  return d;
}

}  // namespace bnorm
