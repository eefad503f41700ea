// The forward geometry of a convolution and its im2col matrix, shared by
// Conv (conv.cpp), ConvTranspose (conv_transpose.cpp) and the integer
// convolutions ConvInteger and QLinearConv (eval/ops/quantization/
// integer.cpp); their attributes as read (geometry.cpp). Internal to the
// evaluator's ops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "eval/run/op.h"
#include "kernels/gather.h"

namespace bnorm::eval {

constexpr size_t kDims = 3;

// One convolution's spatial geometry, always 3-D (leading dims of 1).
struct ConvGeometry {
  int64_t in[kDims], kernel[kDims], out[kDims], stride[kDims], dil[kDims], pad[kDims];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// The attributes of Conv and ConvTranspose, checked for `nd` spatial dims
// (strides and dilations 1 to INT32_MAX, pads and output_padding 0 to it,
// auto_pad one of the four; VALID zeroes the pads).
struct ConvAttrs {
  std::vector<int64_t> stride, dil, pad_begin, pad_end, out_pad;
  std::string auto_pad;
};
ConvAttrs read_conv_attrs(const onnx::NodeProto& node, size_t nd);

// X and W of rank 3 to 5, the same (Error unsupported otherwise).
void check_conv_ranks(const Tensor& x, const Tensor& w);

// g's in, kernel, stride, dil and pad from X, W and the attributes (out set
// to 1: the caller resolves it).
void fill_geometry(ConvGeometry& g, const ConvAttrs& a, const Tensor& x, const Tensor& w);

// [N, M, out..] for X's spatial rank.
std::vector<int64_t> conv_out_dims(const Tensor& x, int64_t m, const ConvGeometry& g);

// Columns [0, cols) of `rows` rows of Y, ld apart, each plus its bias (the
// sum of the products rounded first, then the bias added: Conv's order).
// Conv does it on each stretch of columns as the product leaves it, in
// cache; ConvTranspose on each image's rows once col2im has summed them.
template <typename T>
void add_bias_rows(T* y, int64_t ld, const T* bias, int64_t rows, int64_t cols) {
  if (!bias) return;
  for (int64_t r = 0; r < rows; ++r) {
    T* row = y + r * ld;
    const T v = bias[r];
    for (int64_t j = 0; j < cols; ++j) row[j] += v;
  }
}

// A forward convolution of X [N, C, D..] by W [M, C/group, K..]: its
// geometry (out[] and pad[] resolved from pads or auto_pad) and Y's dims,
// after checking ranks, group and attributes (fails as Conv does).
struct ConvShape {
  ConvGeometry g;
  int64_t n, c, m, group;
  std::vector<int64_t> ydims;
};

ConvShape conv_shape(const OpContext& ctx, const Tensor& x, const Tensor& w, const char* op);

// Output positions [lo, hi) along one axis whose input o*stride + off - pad
// is inside [0, in) (off = k*dil): the rest read the padding.
inline void valid_range(int64_t out, int64_t stride, int64_t off, int64_t pad, int64_t in, int64_t& lo, int64_t& hi) {
  const int64_t first = off >= pad ? 0 : (pad - off + stride - 1) / stride;
  const int64_t end = in + pad - off;  // o*stride < end
  hi = std::min(out, end <= 0 ? 0 : (end + stride - 1) / stride);
  lo = std::min(first, hi);
}

// One output row's stretch [ox0, ox1) of a row of the im2col matrix: X's
// input row `src` (null in the padding) read at ox*stride + off - pad.
template <typename T>
void im2col_stretch(const T* src, const ConvGeometry& g, int64_t off, int64_t lo, int64_t hi, int64_t ox0, int64_t ox1,
                    T* dst, T pad) {
  if (!src) {
    std::fill(dst, dst + (ox1 - ox0), pad);
    return;
  }
  const int64_t a = std::min(std::max(lo, ox0), ox1), b = std::max(a, std::min(hi, ox1));
  std::fill(dst, dst + (a - ox0), pad);
  const T* from = src + (a * g.stride[2] + off - g.pad[2]);
  if constexpr (std::is_same_v<T, float>) {
    kernels::gather_row(from, static_cast<size_t>(g.stride[2]), static_cast<size_t>(b - a), dst + (a - ox0));
  } else if (g.stride[2] == 1) {
    std::copy(from, from + (b - a), dst + (a - ox0));
  } else {
    for (int64_t ox = a; ox < b; ++ox) dst[ox - ox0] = from[(ox - a) * g.stride[2]];
  }
  std::fill(dst + (b - ox0), dst + (ox1 - ox0), pad);
}

// Columns [j0, j1) of the im2col matrix's row for channel plane xc and
// kernel offset (kz, ky, kx): dst[p - j0] = X[c, p*stride - pad + k*dil]
// (`pad` in the padding).
template <typename T>
void im2col_line(const T* xc, const ConvGeometry& g, int64_t kz, int64_t ky, int64_t kx, int64_t j0, int64_t j1,
                 T* dst, T pad) {
  const int64_t ow = g.out[2];
  int64_t lo, hi;
  valid_range(ow, g.stride[2], kx * g.dil[2], g.pad[2], g.in[2], lo, hi);
  if constexpr (std::is_same_v<T, float>) {
    if (g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.pad[0] == 0) {  // 1-D and 2-D
      const auto u = [](int64_t v) { return static_cast<size_t>(v); };
      const kernels::Im2colRow r{xc, u(g.in[1]), u(g.in[2]), u(ow), u(g.stride[1]), u(g.stride[2]),
                                 ky * g.dil[1] - g.pad[1], kx * g.dil[2] - g.pad[2], u(lo), u(hi), pad};
      kernels::im2col_row(r, u(j0), u(j1), dst);
      return;
    }
  }
  // Output line (oz, oy) and column ox0 of position j, stepped along rather
  // than divided out again at each line.
  int64_t oz = j0 / ow / g.out[1], oy = j0 / ow % g.out[1], ox0 = j0 % ow;
  for (int64_t j = j0; j < j1;) {
    const int64_t ox1 = std::min(ow, ox0 + (j1 - j));
    const int64_t iz = oz * g.stride[0] - g.pad[0] + kz * g.dil[0];
    const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dil[1];
    // Only rows inside X get a pointer: X may even be empty (null data).
    const bool inside = iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1];
    im2col_stretch(inside ? xc + (iz * g.in[1] + iy) * g.in[2] : nullptr, g, kx * g.dil[2], lo, hi, ox0, ox1, dst,
                   pad);
    dst += ox1 - ox0;
    j += ox1 - ox0;
    ox0 = 0;
    if (++oy == g.out[1]) {
      oy = 0;
      ++oz;
    }
  }
}

// Columns [j0, j1) of the im2col matrix's rows [r0, r1) (all of them when
// r1 < 0), each j1 - j0 long, the first at col.
template <typename T>
void im2col(const T* x, int64_t channels, const ConvGeometry& g, int64_t j0, int64_t j1, T* col, T pad = T(0),
            int64_t r0 = 0, int64_t r1 = -1) {
  const int64_t ks = g.kernel_size(), width = j1 - j0;
  if (r1 < 0) r1 = channels * ks;
  for (int64_t c = r0 / ks; c < channels && c * ks < r1; ++c) {
    const T* xc = x + c * g.in_size();
    int64_t row = c * ks;
    for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++row) {
          if (row >= r0 && row < r1) im2col_line(xc, g, kz, ky, kx, j0, j1, col + (row - r0) * width, pad);
        }
  }
}

}  // namespace bnorm::eval
