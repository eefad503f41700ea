// LpNormalization and LRN (kernels/strided_norm.h), in float64 with one
// rounding per output element.
//
//   LpNormalization  along `axis` (default -1; negative counts from the
//                    back): y = x / ||x||_p, p = 1 or 2 (default 2; any other
//                    value is an invalid node, the schema allows only these);
//                    y = 0 where the norm is 0. Versions 1 and 22 differ in
//                    types only: f32, f64, f16; bf16 from 22.
//   LRN              X [N, C, D1..Dk] (rank >= 2), size (required, >= 1),
//                    alpha (1e-4), beta (0.75), bias (1.0):
//                    y = x / (bias + alpha / size * square_sum)^beta, the sum
//                    over channels max(0, c - floor((size-1)/2)) ..
//                    min(C-1, c + ceil((size-1)/2)). Versions 1 and 13 differ
//                    in types only: f32, f64, f16; bf16 from 13.
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/nn/norm/family.h"
#include "eval/ops/nn/norm/ops.h"
#include "kernels/strided_norm.h"

namespace bnorm::eval {

Tensors op_lp_norm(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const auto rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0) fail(ErrorKind::input, "input 'input' must have rank 1 or more, is a scalar");
  const auto axis = static_cast<size_t>(normalize_axis(attr_int(*ctx.node, "axis", -1), rank));
  const int64_t p = attr_int(*ctx.node, "p", 2);
  if (p != 1 && p != 2) fail(ErrorKind::input, "p must be 1 or 2, is {}", p);
  const auto outer = static_cast<size_t>(product(x.dims, 0, axis));
  const auto len = static_cast<size_t>(x.dims[axis]);
  const auto inner = static_cast<size_t>(product(x.dims, axis + 1));
  Tensors out(1);
  out[0] = Tensor(x.dtype, x.dims);
  with_storage(x.dtype, "input 'input'", ctx.version >= 22, [&](auto tag) {
    using T = decltype(tag);
    kernels::lp_normalize(x.data<T>(), out[0].data<T>(), outer, len, inner, static_cast<int>(p));
  });
  return out;
}

Tensors op_lrn(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dims.size() < 2) fail(ErrorKind::input, "input 'X' must have rank 2 or more, has shape {}", shape_str(x.dims));
  if (find_attr(*ctx.node, "size") == nullptr) fail(ErrorKind::input, "attribute 'size' is required");
  const int64_t size = attr_int(*ctx.node, "size", 0);
  if (size < 1) fail(ErrorKind::input, "size must be 1 or more, is {}", size);
  const kernels::LrnParams p{static_cast<size_t>(size), attr_float(*ctx.node, "alpha", 1e-4f),
                             attr_float(*ctx.node, "beta", 0.75f), attr_float(*ctx.node, "bias", 1.0f)};
  const kernels::NcsShape shape{static_cast<size_t>(x.dims[0]), static_cast<size_t>(x.dims[1]),
                                static_cast<size_t>(product(x.dims, 2))};
  Tensors out(1);
  out[0] = Tensor(x.dtype, x.dims);
  with_storage(x.dtype, "input 'X'", ctx.version >= 13, [&](auto tag) {
    using T = decltype(tag);
    kernels::lrn(x.data<T>(), out[0].data<T>(), shape, p);
  });
  return out;
}

}  // namespace bnorm::eval
