#include "eval/report/compare.h"

#include <cmath>

namespace bnorm {

Diff compare(const Tensor& expected, const Tensor& actual, const Tolerance& tol) {
  Diff d;
  if (expected.dtype != actual.dtype) {
    d.pass = false;
    d.problem = "type " + dtype_name(actual.dtype) + ", expected " + dtype_name(expected.dtype);
    return d;
  }
  if (expected.dims != actual.dims) {
    d.pass = false;
    d.problem = "shape " + shape_str(actual.dims) + ", expected " + shape_str(expected.dims);
    return d;
  }
  const std::vector<double> e = expected.to_f64(), a = actual.to_f64();
  d.elements = static_cast<int64_t>(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const double x = e[i], y = a[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) ++d.mismatches;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) ++d.mismatches;
      continue;
    }
    const double err = std::fabs(y - x);
    d.max_abs = std::max(d.max_abs, err);
    if (x != 0) d.max_rel = std::max(d.max_rel, err / std::fabs(x));
    if (!(err <= tol.atol + tol.rtol * std::fabs(x))) ++d.mismatches;
  }
  d.pass = d.mismatches == 0;
  return d;
}

Tolerance model_compare_tolerance(DType t) {
  if (t == DType::float16 || t == DType::bfloat16) return {1e-2, 1e-2};
  return {1e-4, 1e-5};
}

}  // namespace bnorm
