// Reductions along axes: ReduceMean and Softmax.
//
//   ReduceMean  axes from the attribute (< 18) or the optional input (18+);
//               no axes: every axis (unless noop_with_empty_axes = 1, 18+);
//               keepdims default 1. Sums accumulate in double.
//   Softmax     before 13: the input as a matrix [prod(dims[:axis]),
//               prod(dims[axis:])] (axis default 1), softmax per row;
//               13+: along `axis` (default -1). exp(x - max) / sum.
#include <cmath>
#include <limits>

#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/op.h"
#include "eval/ops.h"

namespace bnorm::eval {

Tensors op_reduce_mean(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::optional<std::vector<int64_t>> axes;
  if (ctx.version < 18) {
    axes = attr_ints(*ctx.node, "axes");
  } else if (const Tensor* t = ctx.input(1)) {
    axes = read_ints(*t, "axes");
  }
  const bool keep = attr_int(*ctx.node, "keepdims", 1) != 0;
  if ((!axes || axes->empty()) && ctx.version >= 18 && attr_int(*ctx.node, "noop_with_empty_axes", 0) != 0) {
    return {x};
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), !axes || axes->empty());
  if (axes) {
    for (int64_t a : *axes) reduce[normalize_axis(a, rank)] = true;
  }
  std::vector<int64_t> kept_dims, out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    kept_dims.push_back(reduce[d] ? 1 : x.dims[d]);
    if (!reduce[d] || keep) out_dims.push_back(kept_dims.back());
  }
  // Each input element adds into the output element it reduces to.
  const std::vector<int64_t> st = broadcast_strides(kept_dims, x.dims);
  const int64_t total = x.numel(), outs = product(kept_dims);
  const std::vector<double> v = x.to_f64();
  std::vector<double> sum(static_cast<size_t>(outs), 0.0);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t o = 0;
  for (int64_t i = 0; i < total; ++i) {
    sum[o] += v[i];
    for (int64_t d = rank; d-- > 0;) {
      o += st[d];
      if (++idx[d] < x.dims[d]) break;
      o -= st[d] * idx[d];
      idx[d] = 0;
    }
  }
  const double count = outs ? static_cast<double>(total) / static_cast<double>(outs) : 0.0;
  for (double& s : sum) s /= count;
  return {Tensor::from_f64(x.dtype, out_dims, sum)};
}

Tensors op_softmax(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const auto rank = static_cast<int64_t>(x.dims.size());
  const bool legacy = ctx.version < 13;
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1));
  const int64_t outer = product(x.dims, 0, axis);
  const int64_t len = legacy ? product(x.dims, axis) : (rank ? x.dims[axis] : 1);
  const int64_t inner = legacy ? 1 : product(x.dims, axis + 1);
  Tensors out(1);
  with_float_type(x.dtype, "input 'input'", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v = load_values<T>(x);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T* p = v.data() + o * len * inner + i;
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < len; ++k) mx = std::max(mx, p[k * inner]);
        T sum = 0;
        for (int64_t k = 0; k < len; ++k) {
          p[k * inner] = std::exp(p[k * inner] - mx);
          sum += p[k * inner];
        }
        for (int64_t k = 0; k < len; ++k) p[k * inner] /= sum;
      }
    out[0] = make_tensor(x.dtype, x.dims, v);
    return 0;
  });
  return out;
}

}  // namespace bnorm::eval
