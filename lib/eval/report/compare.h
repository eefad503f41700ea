// Comparing tensors the way ONNX's backend test runner does
// (numpy.testing.assert_allclose): an element passes when
//   |actual - expected| <= atol + rtol * |expected|
// NaN matches NaN, an infinity matches the same infinity. Shapes and types
// must agree. The report keeps the largest absolute and relative errors.
#pragma once

#include <cstdint>
#include <string>

#include "model/tensor.h"

namespace bnorm {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct Diff {
  bool pass = true;
  double max_abs = 0;      // max |a - e| over finite pairs
  double max_rel = 0;      // max |a - e| / |e| over finite pairs with e != 0
  int64_t mismatches = 0;  // elements outside tolerance
  int64_t elements = 0;
  std::string problem;     // shape or type disagreement; empty otherwise
};

Diff compare(const Tensor& expected, const Tensor& actual, const Tolerance& tol);

// Tolerances for comparing two models' outputs of this type (bnorm eval
// --compare, fold --verify): float and double rtol 1e-4, atol 1e-5;
// float16 and bfloat16 rtol 1e-2, atol 1e-2.
Tolerance model_compare_tolerance(DType t);

}  // namespace bnorm
