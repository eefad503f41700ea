// One channel's direct 2-D convolution (the depthwise case of Conv: one
// input channel per group), for float and double:
//
//   Y[oy, ox] = sum over (ky, kx), row-major, of W[ky, kx] * X(iy, ix)
//   iy = oy * stride_h - pad_h + ky * dil_h, ix likewise, X = 0 outside
//
// with the semantics of gemm.h on the im2col matrix it replaces: each
// element starts at 0 and becomes fma(W, X, acc) in (ky, kx) order, each
// product and its sum rounded once to T; a position in the padding adds
// W * 0 (NaN for an infinite weight, as the product does). So the bits are
// those of im2col + gemm. No bias.
#pragma once

#include <cstddef>

namespace bnorm::kernels {

struct ConvPlane {
  size_t in_h, in_w, kernel_h, kernel_w, out_h, out_w, stride_h, stride_w, dil_h, dil_w;
  // Padding before the first row and column; may exceed the input (every
  // position of a row then reads the padding).
  size_t pad_h, pad_w;
};

void conv_plane(const float* x, const float* w, float* y, const ConvPlane& s) noexcept;
void conv_plane(const double* x, const double* w, double* y, const ConvPlane& s) noexcept;

}  // namespace bnorm::kernels
