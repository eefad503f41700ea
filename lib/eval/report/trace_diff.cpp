// Element statistics of a traced value (trace.h): compare()'s counts, the
// largest ULP distance, the error histogram and per-channel maxima; and
// the rename map a transform records in metadata_props.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "eval/report/trace.h"

namespace bnorm {

namespace {

// Bin k in 2..15 holds [kEdge[k], kEdge[k + 1]) = [1e(k-14), 1e(k-13)).
constexpr double kEdge[] = {0,    0,    1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6,
                            1e-5, 1e-4, 1e-3,  1e-2,  1e-1,  1e0,  1e1,  1e2};

// For a binary exponent e in [-40, 6]: the bin of 2^e, floor(e log10 2) + 14.
struct DecadeOfExponent {
  int bin[47];
  DecadeOfExponent() {
    for (int e = -40; e <= 6; ++e) bin[e + 40] = static_cast<int>(std::floor(e * std::log10(2.0))) + 14;
  }
};
const DecadeOfExponent kDecades;

// The histogram bin of a positive, finite error without a log per element:
// 2^e <= err < 2^(e+1) spans at most two decades, so one comparison with
// the next decade's edge settles it.
inline int error_bin(double err) {
  if (err < kEdge[2]) return 1;
  if (err >= kEdge[16]) return kErrorBins - 2;
  uint64_t bits;
  std::memcpy(&bits, &err, sizeof bits);
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;  // in [-40, 6] here
  const int k = kDecades.bin[e + 40];
  return k + static_cast<int>(err >= kEdge[k + 1]);  // no branch: it would mispredict
}

// IEEE bits mapped to integers that count representable values in order,
// so the distance of two values is their difference.
int64_t ordered(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

uint64_t bits_at(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::float32: {
      uint32_t u;
      std::memcpy(&u, t.bytes.data() + 4 * i, 4);
      return u;
    }
    case DType::float64: {
      uint64_t u;
      std::memcpy(&u, t.bytes.data() + 8 * i, 8);
      return u;
    }
    default: {
      uint16_t u;
      std::memcpy(&u, t.bytes.data() + 2 * i, 2);
      return u;
    }
  }
}

int float_width(DType t) {
  switch (t) {
    case DType::float32: return 32;
    case DType::float64: return 64;
    case DType::float16:
    case DType::bfloat16: return 16;
    default: return 0;
  }
}

}  // namespace

std::string error_bin_label(int bin) {
  if (bin == 0) return "0";
  if (bin == 1) return "<1e-12";
  if (bin == kErrorBins - 2) return ">=1e2";
  if (bin == kErrorBins - 1) return "NaN/inf";
  return fmt::format("1e{}", bin - 14);
}

void ValueDiff::merge(const ValueDiff& o) {
  diff.pass = diff.pass && o.diff.pass;
  diff.max_abs = std::max(diff.max_abs, o.diff.max_abs);
  diff.max_rel = std::max(diff.max_rel, o.diff.max_rel);
  diff.mismatches += o.diff.mismatches;
  diff.elements += o.diff.elements;
  if (diff.problem.empty()) diff.problem = o.diff.problem;
  max_ulp = std::max(max_ulp, o.max_ulp);
  worst = std::max(worst, o.worst);
  for (int k = 0; k < kErrorBins; ++k) histogram[k] += o.histogram[k];
  if (channel_max.size() < o.channel_max.size()) channel_max.resize(o.channel_max.size(), 0.0);
  for (size_t c = 0; c < o.channel_max.size(); ++c) channel_max[c] = std::max(channel_max[c], o.channel_max[c]);
}

namespace {

// The ULP distance of two elements: float and double from their own bits,
// float16/bfloat16 from theirs, other types none.
// T is the compute type: double also for float16/bfloat16 data, whose bits
// are read by width, never as doubles (found by ASan: a float16 tensor was
// read 8 bytes an element).
template <typename T>
double ulp_distance(const Tensor& a, const Tensor& b, int64_t i, int width) {
  const bool own_bits = std::is_same_v<T, float> ? a.dtype == DType::float32 : a.dtype == DType::float64;
  if (!own_bits) {
    if (!width) return 0;
    return std::fabs(static_cast<double>(ordered(bits_at(a, i), width)) -
                     static_cast<double>(ordered(bits_at(b, i), width)));
  }
  using U = std::conditional_t<std::is_same_v<T, float>, uint32_t, uint64_t>;
  U ua, ub;
  std::memcpy(&ua, a.data<T>() + i, sizeof(U));
  std::memcpy(&ub, b.data<T>() + i, sizeof(U));
  if constexpr (std::is_same_v<T, float>) {
    const int64_t d = ordered(ua, 32) - ordered(ub, 32);  // fits: both within +-2^31
    return static_cast<double>(d < 0 ? -d : d);
  }
  return std::fabs(static_cast<double>(ordered(ua, width)) - static_cast<double>(ordered(ub, width)));
}

// Elements [begin, end) into v; returns their largest error. x, y: the
// elements (T* for float and double, the converted doubles otherwise);
// a, b: the tensors, for their bits. The figures are kept in locals (in
// registers) and the histogram in two halves for even and odd elements,
// so that consecutive counts into one bin do not wait for each other.
template <typename T>
double scan_range(const Tensor& a, const Tensor& b, const T* x, const T* y, int64_t begin, int64_t end,
                  const Tolerance& tol, ValueDiff& v) {
  const int width = float_width(a.dtype);
  const double rtol = tol.rtol, atol = tol.atol, inf = std::numeric_limits<double>::infinity();
  double max_abs = v.diff.max_abs, max_rel = v.diff.max_rel, worst = v.worst, max_ulp = v.max_ulp, range_max = 0;
  int64_t mismatches = 0;
  int64_t hist[2][kErrorBins] = {};
  for (int64_t i = begin; i < end; ++i) {
    int64_t* h = hist[i & 1];
    const double e = x[i], g = y[i];
    if (e == g) {  // equal finite values and equal infinities
      ++h[0];
      continue;
    }
    if (!std::isfinite(e) || !std::isfinite(g)) {
      const bool both_nan = std::isnan(e) && std::isnan(g);
      ++h[both_nan ? 0 : kErrorBins - 1];
      if (both_nan) continue;
      ++mismatches;
      worst = inf;
      continue;
    }
    const double err = std::fabs(g - e);
    ++h[error_bin(err)];
    const double allowed = atol + rtol * std::fabs(e);
    max_abs = std::max(max_abs, err);
    // Divide only when the ratio may be a new maximum.
    if (e != 0 && err > max_rel * std::fabs(e)) max_rel = std::max(max_rel, err / std::fabs(e));
    mismatches += !(err <= allowed);
    if (err > worst * allowed) worst = std::max(worst, allowed > 0 ? err / allowed : inf);
    max_ulp = std::max(max_ulp, ulp_distance<T>(a, b, i, width));
    range_max = std::max(range_max, err);
  }
  v.diff.max_abs = max_abs;
  v.diff.max_rel = max_rel;
  v.diff.mismatches += mismatches;
  v.worst = worst;
  v.max_ulp = max_ulp;
  for (int k = 0; k < kErrorBins; ++k) v.histogram[k] += hist[0][k] + hist[1][k];
  return range_max;
}

// By planes of one channel for rank-4 values, so the channel index is not
// divided out per element.
template <typename T>
void scan(const Tensor& a, const Tensor& b, const T* x, const T* y, const Tolerance& tol, ValueDiff& v) {
  const int64_t n = v.diff.elements;
  if (v.channel_max.empty()) {
    scan_range(a, b, x, y, 0, n, tol, v);
    return;
  }
  const int64_t plane = std::max<int64_t>(a.dims[2] * a.dims[3], 1);
  for (int64_t start = 0, block = 0; start < n; start += plane, ++block) {
    double& c = v.channel_max[static_cast<size_t>(block % a.dims[1])];
    c = std::max(c, scan_range(a, b, x, y, start, std::min(n, start + plane), tol, v));
  }
}

}  // namespace

// One pass over both tensors; equal elements cost a compare and a count.
ValueDiff diff_values(const Tensor& a, const Tensor& b, const Tolerance& tol) {
  ValueDiff v;
  if (a.dtype != b.dtype || a.dims != b.dims) {
    v.diff = compare(a, b, tol);
    v.worst = std::numeric_limits<double>::infinity();
    return v;
  }
  v.diff.elements = a.numel();
  if (a.dims.size() == 4 && a.dims[1] > 0) v.channel_max.assign(static_cast<size_t>(a.dims[1]), 0.0);
  if (a.dtype == DType::float32) {
    scan(a, b, a.data<float>(), b.data<float>(), tol, v);
  } else if (a.dtype == DType::float64) {
    scan(a, b, a.data<double>(), b.data<double>(), tol, v);
  } else {
    // Every other type bnorm holds converts to double exactly.
    const std::vector<double> x = a.to_f64(), y = b.to_f64();
    scan(a, b, x.data(), y.data(), tol, v);
  }
  v.diff.pass = v.diff.mismatches == 0;
  return v;
}

std::map<std::string, std::string> read_renames(const Model& m) {
  std::map<std::string, std::string> out;
  for (const auto& p : m.proto.metadata_props()) {
    if (p.key() != kRenamesKey) continue;
    const auto j = nlohmann::json::parse(p.value(), nullptr, false);
    if (!j.is_object()) fail(ErrorKind::input, "metadata '{}' is not a JSON object", kRenamesKey);
    for (const auto& [k, v] : j.items()) {
      if (!v.is_string()) fail(ErrorKind::input, "metadata '{}': the value of '{}' is not a string", kRenamesKey, k);
      out[k] = v.get<std::string>();
    }
  }
  return out;
}

}  // namespace bnorm
