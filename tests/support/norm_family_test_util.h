// Helpers of the normalization family's evaluator tests
// (eval/ops/nn/norm/family_test.cpp, eval/ops/nn/norm/local_test.cpp): one-node
// models run through bnorm::evaluate, tensors from float64 values, the
// comparison within one rounding, and the float64 spec references shared
// by both files.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"
#include "kernels/half.h"

namespace normfamily_test {

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::Attrs;
using bnorm::test::set_ints;
using Inputs = std::vector<std::pair<std::string, Tensor>>;

// One node of `op` at `opset`, its inputs given as graph inputs ("" names an
// absent optional input).
inline std::map<std::string, Tensor> run(const std::string& op, int opset, const Inputs& in,
                                  const std::vector<std::string>& outputs, const Attrs& attrs = {}) {
  bnorm::test::GraphBuilder b(opset);
  std::vector<std::string> names;
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, t] : in) {
    names.push_back(name);
    if (name.empty()) continue;
    b.input(name, t.dtype, t.dims);
    feeds[name] = t;
  }
  auto& node = b.node(op, names, outputs, "n");
  if (attrs) attrs(node);
  for (const auto& o : outputs) b.output(o);
  return bnorm::evaluate(b.model(), feeds);
}

inline std::vector<double> random(size_t n, double lo, double hi, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

// `v` as a tensor of type t (rounded once), and back as the values it holds.
inline Tensor tensor(DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::from_f64(t, std::move(dims), v);
}
inline std::vector<double> held(DType t, const std::vector<int64_t>& dims, const std::vector<double>& v) {
  return tensor(t, dims, v).to_f64();
}

// Within one rounding of the type (and float64's own error).
inline void check_close(const Tensor& got, const std::vector<double>& want) {
  REQUIRE(static_cast<size_t>(got.numel()) == want.size());
  const std::vector<double> g = got.to_f64();
  const double rel = got.dtype == DType::float64 ? 1e-13
                   : got.dtype == DType::float32 ? 1e-6
                   : got.dtype == DType::float16 ? 1.0 / 1024
                                                  : 1.0 / 128;
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(g[i]));
    } else {
      CHECK(std::fabs(g[i] - want[i]) <= rel * std::fabs(want[i]) + 1e-6);
    }
  }
}

// LayerNormalization per the spec: X as [rows, len]; scale and bias given
// already broadcast to all of X. Also Mean and InvStdDev per row.
struct LnRef {
  std::vector<double> y, mean, inv;
};
inline LnRef layer_norm_ref(const std::vector<double>& x, size_t rows, const std::vector<double>& s,
                     const std::vector<double>& b, double eps, bool rms = false) {
  LnRef r;
  const size_t len = x.size() / rows;
  for (size_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (size_t k = 0; k < len; ++k) mean += x[i * len + k];
    mean /= len;
    for (size_t k = 0; k < len; ++k) {
      const double v = x[i * len + k];
      var += rms ? v * v : (v - mean) * (v - mean);
    }
    var /= len;
    if (rms) mean = 0;
    const double inv = 1 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.inv.push_back(inv);
    for (size_t k = 0; k < len; ++k) {
      const size_t at = i * len + k;
      r.y.push_back((x[at] - mean) * inv * s[at] + (b.empty() ? 0 : b[at]));
    }
  }
  return r;
}

// `row` repeated `times` times.
inline std::vector<double> repeat(const std::vector<double>& row, size_t times) {
  std::vector<double> out;
  for (size_t i = 0; i < times; ++i) out.insert(out.end(), row.begin(), row.end());
  return out;
}

inline const double kEps = double{1e-5f};

// GroupNormalization per the spec: X [N, C, S]; scale and bias per channel.
inline std::vector<double> group_norm_ref(const std::vector<double>& x, size_t n, size_t c, size_t g,
                                   const std::vector<double>& s, const std::vector<double>& b, double eps) {
  const size_t len = x.size() / n / g, sp = x.size() / n / c;
  std::vector<double> y;
  for (size_t r = 0; r < n * g; ++r) {
    double mean = 0, var = 0;
    for (size_t k = 0; k < len; ++k) mean += x[r * len + k];
    mean /= len;
    for (size_t k = 0; k < len; ++k) var += (x[r * len + k] - mean) * (x[r * len + k] - mean);
    var /= len;
    for (size_t k = 0; k < len; ++k) {
      const size_t ch = (r * len + k) / sp % c;
      y.push_back(s[ch] * (x[r * len + k] - mean) / std::sqrt(var + eps) + b[ch]);
    }
  }
  return y;
}

}  // namespace normfamily_test
