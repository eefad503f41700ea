// Elementwise math beyond the four arithmetic ops: Neg, Abs, Exp, Log, Pow,
// PRelu, and the variadic Sum, Max, Min, Mean.
//
// Contract per op (versions in parentheses where they differ):
//   Neg, Abs   any signed (Abs: any) numeric type, in its own type.
//   Exp, Log   floating types.
//   Pow        Y = X ^ Y, numpy broadcasting (before 7: the `broadcast`
//              and `axis` attributes, as Add); from 12 the exponent may have
//              another type; Y has X's type (integers: truncated).
//   PRelu      Y = X < 0 ? slope * X : X. From 7 slope broadcasts to X
//              (numpy, one way); before 7 slope holds one value or one per
//              channel (axis 1), or has X's shape.
//   Sum, Mean  1..N inputs of one floating type, numpy broadcasting (before
//   Max, Min   8 equal shapes, which broadcasting also covers). Max and Min
//              take integers from 12 and propagate NaN.
//
// Floating types compute in float (double for double) and round once.
#include <cmath>
#include <type_traits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

// Y = f(X) elementwise; integer types too when `integers`.
template <typename F>
Tensors unary(const OpContext& ctx, bool integers, F f) {
  const Tensor& x = ctx.required(0, "X");
  Tensors out(1);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v = load_values<T>(x);
    for (T& e : v) e = f(e);
    out[0] = make_any(x.dtype, x.dims, v);
    return 0;
  };
  if (integers) {
    with_numeric_type(x.dtype, "input 'X'", run);
  } else {
    with_float_type(x.dtype, "input 'X'", run);
  }
  return out;
}

enum class Fold { sum, max, min, mean };

template <typename T>
T fold(Fold op, T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if ((op == Fold::max || op == Fold::min) && (std::isnan(x) || std::isnan(y))) return x + y;
  }
  switch (op) {
    case Fold::max: return x < y ? y : x;
    case Fold::min: return y < x ? y : x;
    default: return static_cast<T>(x + y);
  }
}

Tensors variadic(const OpContext& ctx, Fold op) {
  if (ctx.input_count() == 0) fail(ErrorKind::input, "at least one input is needed");
  const Tensor& first = ctx.required(0, "data_0");
  const bool integers = op == Fold::max || op == Fold::min;
  Tensors out(1);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> acc = load_values<T>(first);
    std::vector<int64_t> dims = first.dims;
    for (size_t i = 1; i < ctx.input_count(); ++i) {
      const Tensor& in = ctx.required(i, "data_i");
      if (in.dtype != first.dtype) {
        fail(ErrorKind::input, "inputs have types {} and {}, which must be equal", dtype_name(first.dtype),
             dtype_name(in.dtype));
      }
      const std::vector<T> v = load_values<T>(in);
      std::vector<int64_t> next = broadcast_shapes(dims, in.dims);
      std::vector<T> r(static_cast<size_t>(product(next)));
      broadcast_apply(acc.data(), dims, v.data(), in.dims, r.data(), next, [op](T x, T y) { return fold(op, x, y); });
      acc = std::move(r);
      dims = std::move(next);
    }
    if (op == Fold::mean) {
      for (T& e : acc) e = static_cast<T>(e / static_cast<T>(ctx.input_count()));
    }
    out[0] = make_any(first.dtype, dims, acc);
    return 0;
  };
  if (integers) {
    with_numeric_type(first.dtype, "input 'data_0'", run);
  } else {
    with_float_type(first.dtype, "input 'data_0'", run);
  }
  return out;
}

}  // namespace

Tensors op_neg(const OpContext& ctx) {
  return unary(ctx, true, [](auto v) { return static_cast<decltype(v)>(-v); });
}

Tensors op_abs(const OpContext& ctx) {
  return unary(ctx, true, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_unsigned_v<T>) {
      return v;
    } else {
      return static_cast<T>(v < 0 ? -v : v);
    }
  });
}

Tensors op_exp(const OpContext& ctx) {
  return unary(ctx, false, [](auto v) { return std::exp(v); });
}

Tensors op_log(const OpContext& ctx) {
  return unary(ctx, false, [](auto v) { return std::log(v); });
}

Tensors op_pow(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& y = ctx.required(1, "Y");
  if (ctx.version < 12 && x.dtype != y.dtype) {
    fail(ErrorKind::input, "inputs have types {} and {}, which must be equal before version 12", dtype_name(x.dtype),
         dtype_name(y.dtype));
  }
  const std::vector<int64_t> dy = legacy_b_dims(ctx, x, y);
  const std::vector<int64_t> dims = broadcast_shapes(x.dims, dy);
  Tensors out(1);
  // Integer bases compute in double, then truncate to X's type.
  const DType compute = is_floating(x.dtype) ? x.dtype : DType::float64;
  with_float_type(compute, "input 'X'", [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> vx = load_values<T>(x), vy = load_values<T>(y);
    std::vector<T> r(static_cast<size_t>(product(dims)));
    broadcast_apply(vx.data(), x.dims, vy.data(), dy, r.data(), dims, [](T a, T b) { return std::pow(a, b); });
    out[0] = make_any(x.dtype, dims, r);
    return 0;
  });
  return out;
}

Tensors op_prelu(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& slope = ctx.required(1, "slope");
  std::vector<int64_t> ds = slope.dims;
  if (ctx.version < 7) {
    if (slope.numel() == 1) {
      ds.clear();
    } else if (slope.dims != x.dims) {
      if (x.dims.size() < 2 || slope.numel() != x.dims[1]) {
        fail(ErrorKind::input, "slope of shape {} is neither one value, one per channel nor X's shape {}",
             shape_str(slope.dims), shape_str(x.dims));
      }
      ds.assign(x.dims.size(), 1);
      ds[1] = x.dims[1];
    }
  }
  if (broadcast_shapes(x.dims, ds) != x.dims) {
    fail(ErrorKind::input, "slope of shape {} does not broadcast to X's shape {}", shape_str(slope.dims),
         shape_str(x.dims));
  }
  Tensors out(1);
  with_numeric_type(x.dtype, "input 'X'", [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> vx = load_values<T>(x), vs = load_values<T>(slope);
    std::vector<T> r(static_cast<size_t>(x.numel()));
    broadcast_apply(vx.data(), x.dims, vs.data(), ds, r.data(), x.dims,
                    [](T a, T s) { return a < 0 ? static_cast<T>(s * a) : a; });
    out[0] = make_any(x.dtype, x.dims, r);
    return 0;
  });
  return out;
}

Tensors op_sum(const OpContext& ctx) { return variadic(ctx, Fold::sum); }
Tensors op_max(const OpContext& ctx) { return variadic(ctx, Fold::max); }
Tensors op_min(const OpContext& ctx) { return variadic(ctx, Fold::min); }
Tensors op_mean(const OpContext& ctx) { return variadic(ctx, Fold::mean); }

}  // namespace bnorm::eval
