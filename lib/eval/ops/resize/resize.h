// The separable resampling engine behind Resize and Upsample
// (resize_kernel.cpp); the ops read their version's attributes and
// inputs into a Spec and one AxisTarget per axis (resize.cpp).
#pragma once

#include <string>
#include <vector>

#include "model/tensor.h"

namespace bnorm::eval::resize {

enum class Interp { nearest, linear, cubic };

struct Spec {
  Interp mode = Interp::nearest;
  // coordinate_transformation_mode, or "asymmetric" for Upsample/Resize-10.
  std::string transform = "asymmetric";
  // nearest_mode, or "simple": Upsample/Resize-10 (floor when upsampling,
  // ceil when downsampling, as onnxruntime has always run them).
  std::string nearest = "simple";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
};

// What one axis becomes: `out` elements; `length` is the target length
// (out, or in * scale when it came from a scale, possibly fractional);
// `scale` as given or derived; the roi of tf_crop_and_resize.
struct AxisTarget {
  int64_t out = 0;
  double length = 0;
  double scale = 1;
  double roi_lo = 0, roi_hi = 1;
};

// X resampled along every axis; values computed in float64 and rounded
// once into X's type (integers truncated toward zero and saturated).
Tensor resample(const Tensor& x, const Spec& s, const std::vector<AxisTarget>& axes);

}  // namespace bnorm::eval::resize
