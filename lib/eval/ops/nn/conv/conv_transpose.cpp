// ConvTranspose, 1-D to 3-D, with group, strides, dilations, pads,
// auto_pad, output_padding and output_shape (conv.cpp's header gives the
// output sizes): one matrix product per image and group, W's group block
// transposed, then col2im sums the columns into Y; the bias is added to
// each summed element.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "eval/ops/math/gemm_kernel.h"
#include "eval/ops/nn/conv/geometry.h"
#include "eval/ops/nn/conv/ops.h"
#include "eval/run/numeric.h"
#include "model/attrs.h"

namespace bnorm::eval {

namespace {

// The transpose of im2col: Y[m, i*stride - pad + k*dil] += col[(m*K + k), i].
template <typename T>
void col2im(const T* col, int64_t channels, const ConvGeometry& g, T* y) {
  const int64_t ks = g.kernel_size(), is = g.in_size();
  for (int64_t m = 0; m < channels; ++m) {
    T* ym = y + m * g.out_size();
    int64_t row = m * ks;
    for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++row) {
          const T* src = col + row * is;
          for (int64_t iz = 0; iz < g.in[0]; ++iz) {
            const int64_t oz = iz * g.stride[0] - g.pad[0] + kz * g.dil[0];
            for (int64_t iy = 0; iy < g.in[1]; ++iy) {
              const int64_t oy = iy * g.stride[1] - g.pad[1] + ky * g.dil[1];
              const bool skip = oz < 0 || oz >= g.out[0] || oy < 0 || oy >= g.out[1];
              T* dst = skip ? nullptr : ym + (oz * g.out[1] + oy) * g.out[2];
              for (int64_t ix = 0; ix < g.in[2]; ++ix, ++src) {
                const int64_t ox = ix * g.stride[2] - g.pad[2] + kx * g.dil[2];
                if (!skip && ox >= 0 && ox < g.out[2]) dst[ox] += *src;
              }
            }
          }
        }
  }
}

}  // namespace

Tensors op_conv_transpose(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& w = ctx.required(1, "W");
  const Tensor* b = ctx.input(2);
  check_conv_ranks(x, w);
  const size_t nd = x.dims.size() - 2, lead = kDims - nd;
  const ConvAttrs a = read_conv_attrs(*ctx.node, nd);
  const int64_t group = attr_int(*ctx.node, "group", 1);
  const int64_t n = x.dims[0], c = x.dims[1];
  if (group <= 0 || c % group || w.dims[0] != c) {
    fail(ErrorKind::input, "W {} does not match X {} with group {}", shape_str(w.dims), shape_str(x.dims), group);
  }
  const int64_t mg = w.dims[1], m = mg * group;
  if (b && (b->dims.size() != 1 || b->dims[0] != m)) fail(ErrorKind::input, "input 'B' has shape {}, expected [{}]", shape_str(b->dims), m);
  ConvGeometry g;
  fill_geometry(g, a, x, w);
  auto shape = attr_ints(*ctx.node, "output_shape");
  if (shape && shape->size() > nd) shape->erase(shape->begin(), shape->end() - nd);
  if (shape && shape->size() != nd) fail(ErrorKind::input, "output_shape {} does not have {} dims", shape_str(*shape), nd);
  const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
  for (size_t d = lead; d < kDims; ++d) {
    const int64_t full = g.stride[d] * (g.in[d] - 1) + a.out_pad[d - lead] + (g.kernel[d] - 1) * g.dil[d] + 1;
    if (shape || same) {
      g.out[d] = shape ? (*shape)[d - lead] : g.in[d] * g.stride[d];
      // May be negative (output_shape larger than the full output): floor
      // division then puts the extra rows at the end, as ONNX does.
      const int64_t total = full - g.out[d];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      g.pad[d] = a.auto_pad == "SAME_UPPER" ? half : total - half;
    } else {
      g.out[d] = full - a.pad_begin[d - lead] - a.pad_end[d - lead];
    }
    if (g.out[d] <= 0) fail(ErrorKind::input, "the output of ConvTranspose would be empty");
  }
  // First at one byte an element: out_size() and the offsets below cannot overflow.
  const std::vector<int64_t> ydims = conv_out_dims(x, m, g);
  checked_buffer_numel(ydims, 1, "the output of ConvTranspose");
  const int64_t cg = c / group, ks = g.kernel_size(), os = g.out_size(), is = g.in_size();
  Tensors out(1);
  with_float_type(x.dtype, "input 'X'", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> y(static_cast<size_t>(checked_buffer_numel(ydims, sizeof(T), "the output of ConvTranspose")),
                     T(0));
    std::vector<T> col(static_cast<size_t>(checked_buffer_numel({mg, ks, is}, sizeof(T), "ConvTranspose's col buffer")));
    const std::vector<T> vx = load_values<T>(x), vw = load_values<T>(w);
    std::vector<T> wt(static_cast<size_t>(mg * ks * cg));
    for (int64_t gi = 0; gi < group; ++gi) {
      // W's group block is [cg, mg*K]; the product needs its transpose.
      transpose_into(vw.data() + gi * cg * mg * ks, cg, mg * ks, wt.data());
      for (int64_t i = 0; i < n; ++i) {
        gemm<T>(wt.data(), cg, vx.data() + (i * c + gi * cg) * is, is, col.data(), is, mg * ks, is, cg, false);
        col2im(col.data(), mg, g, y.data() + (i * m + gi * mg) * os);
      }
    }
    std::vector<T> kb;
    const T* vb = b ? values_as<T>(*b, kb) : nullptr;
    for (int64_t i = 0; i < n; ++i) add_bias_rows(y.data() + i * m * os, os, vb, m, os);
    out[0] = make_tensor(x.dtype, ydims, y);
    return 0;
  });
  return out;
}

}  // namespace bnorm::eval
