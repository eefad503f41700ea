// Reductions along axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
// ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp; Softmax and LogSoftmax.
//
//   Reduce*     axes from the attribute, or from the optional input from
//               13 (ReduceSum) or 18 (the others); no axes: every axis
//               (unless noop_with_empty_axes = 1, with the input form);
//               keepdims default 1. Accumulates in double, rounds once.
//   Softmax     before 13: the input as a matrix [prod(dims[:axis]),
//   LogSoftmax  prod(dims[axis:])] (axis default 1), per row; 13+: along
//               `axis` (default -1). exp(x - max) / sum, or
//               x - max - log(sum).
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/reduction/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

enum class Reduce { sum, mean, max, min, prod, sum_square, l1, l2, log_sum, log_sum_exp };

// Accumulates in double; integers must stay within 2^53 to be exact.
Tensors reduce(const OpContext& ctx, Reduce kind, int axes_input_from) {
  const Tensor& x = ctx.required(0, "data");
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::optional<std::vector<int64_t>> axes;
  if (ctx.version < axes_input_from) {
    axes = attr_ints(*ctx.node, "axes");
  } else if (const Tensor* t = ctx.input(1)) {
    axes = read_ints(*t, "axes");
  }
  const bool keep = attr_int(*ctx.node, "keepdims", 1) != 0;
  const bool none = !axes || axes->empty();
  if (none && ctx.version >= axes_input_from && attr_int(*ctx.node, "noop_with_empty_axes", 0) != 0) {
    return one_tensor(std::move(x));
  }
  std::vector<bool> reduced(static_cast<size_t>(rank), none);
  if (axes) {
    for (int64_t a : *axes) reduced[normalize_axis(a, rank)] = true;
  }
  std::vector<int64_t> kept_dims, out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    kept_dims.push_back(reduced[d] ? 1 : x.dims[d]);
    if (!reduced[d] || keep) out_dims.push_back(kept_dims.back());
  }
  const double init = kind == Reduce::max   ? -std::numeric_limits<double>::infinity()
                      : kind == Reduce::min ? std::numeric_limits<double>::infinity()
                      : kind == Reduce::prod ? 1.0
                                             : 0.0;
  const std::vector<double> v = load_values<double>(x);
  std::vector<double> acc(static_cast<size_t>(product(kept_dims)), init);
  // Each input element adds into the output element it reduces to.
  const std::vector<int64_t> to = broadcast_offsets(kept_dims, x.dims);
  for (size_t i = 0; i < v.size(); ++i) {
    double& a = acc[to[i]];
    const double e = v[i];
    switch (kind) {
      case Reduce::max: a = std::isnan(e) || e > a ? e : a; break;
      case Reduce::min: a = std::isnan(e) || e < a ? e : a; break;
      case Reduce::prod: a *= e; break;
      case Reduce::sum_square:
      case Reduce::l2: a += e * e; break;
      case Reduce::l1: a += std::abs(e); break;
      case Reduce::log_sum_exp: a += std::exp(e); break;
      default: a += e;
    }
  }
  const double count = acc.empty() ? 0.0 : static_cast<double>(v.size()) / static_cast<double>(acc.size());
  for (double& a : acc) {
    switch (kind) {
      case Reduce::mean: a /= count; break;
      case Reduce::l2: a = std::sqrt(a); break;
      case Reduce::log_sum:
      case Reduce::log_sum_exp: a = std::log(a); break;
      default: break;
    }
  }
  return one_tensor(make_any(x.dtype, out_dims, acc));
}

// Softmax, or LogSoftmax when `log`.
Tensors softmax(const OpContext& ctx, bool log) {
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
        for (int64_t k = 0; k < len; ++k) sum += std::exp(p[k * inner] - mx);
        if (log) {
          const T shift = mx + std::log(sum);
          for (int64_t k = 0; k < len; ++k) p[k * inner] -= shift;
        } else {
          for (int64_t k = 0; k < len; ++k) p[k * inner] = std::exp(p[k * inner] - mx) / sum;
        }
      }
    out[0] = make_tensor(x.dtype, x.dims, v);
    return 0;
  });
  return out;
}

}  // namespace

Tensors op_reduce_sum(const OpContext& ctx) { return reduce(ctx, Reduce::sum, 13); }
Tensors op_reduce_mean(const OpContext& ctx) { return reduce(ctx, Reduce::mean, 18); }
Tensors op_reduce_max(const OpContext& ctx) { return reduce(ctx, Reduce::max, 18); }
Tensors op_reduce_min(const OpContext& ctx) { return reduce(ctx, Reduce::min, 18); }
Tensors op_reduce_prod(const OpContext& ctx) { return reduce(ctx, Reduce::prod, 18); }
Tensors op_reduce_sum_square(const OpContext& ctx) { return reduce(ctx, Reduce::sum_square, 18); }
Tensors op_reduce_l1(const OpContext& ctx) { return reduce(ctx, Reduce::l1, 18); }
Tensors op_reduce_l2(const OpContext& ctx) { return reduce(ctx, Reduce::l2, 18); }
Tensors op_reduce_log_sum(const OpContext& ctx) { return reduce(ctx, Reduce::log_sum, 18); }
Tensors op_reduce_log_sum_exp(const OpContext& ctx) { return reduce(ctx, Reduce::log_sum_exp, 18); }

Tensors op_softmax(const OpContext& ctx) { return softmax(ctx, false); }
Tensors op_log_softmax(const OpContext& ctx) { return softmax(ctx, true); }

}  // namespace bnorm::eval
