// LayerNormalization and RMSNormalization on rows: data seen as [rows, len]
// (the axes before `axis` make the rows, the normalized axes the row), a
// row at a time:
//
//   LayerNormalization  mean = sum x / len,  var = sum (x - mean)^2 / len
//                       y = (x - mean) / sqrt(var + epsilon) * scale + bias
//   RMSNormalization    ms = sum x^2 / len
//                       y = x / sqrt(ms + epsilon) * scale
//
// Statistics in float64 for every storage type (moments.h for the mean and
// variance, a plain float64 sum of squares for RMS: the square of a float is
// exact in float64), the element formula in float64 too, rounded once to
// the output type. scale and bias are float64 arrays of len elements, or
// of rows * len when their stride is len (parameters that vary along the
// leading axes); bias may be null (0). When `mean` / `inv_std` are not
// null they receive each row's mean (RMS: 0) and 1 / sqrt(var + epsilon)
// (RMS: 1 / sqrt(ms + epsilon)), `rows` of each.
//
// Storage types f32, f64, f16, bf16 for x and y independently
// (RMSNormalization's X and Y differ; LayerNormalization's are the same).
// y == x allowed when they have the same type, otherwise no overlap. NaN
// and infinities follow IEEE; a constant row with epsilon = 0 gives NaN
// (0 / 0) for LayerNormalization. Rows are spread over the OpenMP threads.
#pragma once

#include <cstddef>

#include "kernels/half.h"

namespace bnorm::kernels {

struct RowNormParams {
  const double* scale;
  size_t scale_stride;  // 0: one row of scale for all rows; len: one per row
  const double* bias;   // may be null
  size_t bias_stride;
  double epsilon;
  bool rms;  // RMSNormalization (no centering, no bias)
};

// Explicitly instantiated for X, Y in {float, double, f16, bf16}.
template <class X, class Y>
void norm_rows(const X* x, Y* y, size_t rows, size_t len, const RowNormParams& p, double* mean,
               double* inv_std) noexcept;

}  // namespace bnorm::kernels
