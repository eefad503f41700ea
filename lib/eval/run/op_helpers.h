// Small checks and formulas that several op families share, defined once:
// an integer scalar read from an input, a 0/1 attribute, the numeric
// element types, and Keys' cubic convolution kernel.
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "model/tensor.h"

namespace bnorm::eval {

// The one element of input `what`, of any integer type read_ints takes.
inline int64_t single_int(const Tensor& t, const char* what) {
  if (t.numel() != 1) fail(ErrorKind::input, "input '{}' must be a scalar, not {}", what, shape_str(t.dims));
  return read_ints(t, what)[0];
}

// An attribute that may only be 0 or 1; another value is an invalid model.
inline bool attr_flag(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const int64_t v = attr_int(node, name, fallback);
  if (v != 0 && v != 1) fail(ErrorKind::input, "attribute '{}' is {}, not 0 or 1", name, v);
  return v == 1;
}

// Every element type a Tensor holds but bool.
inline bool is_numeric_type(DType t) { return t != DType::boolean && t != DType::undefined && dtype_size(t) != 0; }

// Keys' cubic convolution kernel W(d) with coefficient a (Resize's
// cubic_coeff_a, GridSample's -0.75): zero from |d| = 2 on.
inline double cubic_keys(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return (((d - 5) * d + 8) * d - 4) * a;
  return 0;
}

}  // namespace bnorm::eval
