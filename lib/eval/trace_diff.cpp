// Element statistics of a traced value (trace.h): compare()'s counts, the
// largest ULP distance, the error histogram and per-channel maxima; and
// the rename map a transform records in metadata_props.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "eval/trace.h"

namespace bnorm {

namespace {

int error_bin(double err) {
  if (err == 0) return 0;
  if (!std::isfinite(err)) return kErrorBins - 1;
  const int k = static_cast<int>(std::floor(std::log10(err))) + 14;
  return std::clamp(k, 1, kErrorBins - 2);
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

// One pass over both tensors as doubles (every type converts exactly).
ValueDiff diff_values(const Tensor& a, const Tensor& b, const Tolerance& tol) {
  ValueDiff v;
  Diff& d = v.diff;
  if (a.dtype != b.dtype || a.dims != b.dims) {
    d = compare(a, b, tol);
    v.worst = std::numeric_limits<double>::infinity();
    return v;
  }
  const std::vector<double> x = a.to_f64(), y = b.to_f64();
  d.elements = static_cast<int64_t>(x.size());
  const int width = float_width(a.dtype);
  const bool channels = a.dims.size() == 4 && a.dims[1] > 0;
  const int64_t plane = channels ? a.dims[2] * a.dims[3] : 1;
  if (channels) v.channel_max.assign(static_cast<size_t>(a.dims[1]), 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = x[i], g = y[i];
    if (std::isnan(e) || std::isnan(g) || std::isinf(e) || std::isinf(g)) {
      const bool same = (std::isnan(e) && std::isnan(g)) || e == g;
      if (!same) {
        ++d.mismatches;
        ++v.histogram[kErrorBins - 1];
        v.worst = std::numeric_limits<double>::infinity();
      } else {
        ++v.histogram[0];
      }
      continue;
    }
    const double err = std::fabs(g - e);
    const double allowed = tol.atol + tol.rtol * std::fabs(e);
    d.max_abs = std::max(d.max_abs, err);
    if (e != 0) d.max_rel = std::max(d.max_rel, err / std::fabs(e));
    if (!(err <= allowed)) ++d.mismatches;
    if (err > 0) v.worst = std::max(v.worst, allowed > 0 ? err / allowed : std::numeric_limits<double>::infinity());
    ++v.histogram[error_bin(err)];
    if (width && err > 0) {
      const int64_t da = ordered(bits_at(a, static_cast<int64_t>(i)), width);
      const int64_t db = ordered(bits_at(b, static_cast<int64_t>(i)), width);
      v.max_ulp = std::max(v.max_ulp, std::fabs(static_cast<double>(da) - static_cast<double>(db)));
    }
    if (channels) {
      double& c = v.channel_max[static_cast<size_t>((static_cast<int64_t>(i) / plane) % a.dims[1])];
      c = std::max(c, err);
    }
  }
  d.pass = d.mismatches == 0;
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
