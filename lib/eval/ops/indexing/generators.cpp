// Ops that generate values from positions: OneHot, Range, CumSum, CumProd,
// EyeLike.
//
// Contract per op (versions in parentheses):
//   OneHot (9, 11)  out has indices' shape with a dim of size `depth`
//       inserted at `axis` (in [-r-1, r], default -1: last);
//       out[..., d, ...] = values[1] (on) where indices[...] == d, else
//       values[0] (off); out takes values' type. Indices and depth of a
//       floating type are truncated to int64. At 9 an index outside
//       [0, depth) gives all off; from 11 a negative index in [-depth, -1]
//       counts from the end.
//   Range (11, 27)  n = max(ceil((limit - start) / delta), 0) elements
//       start + i * delta, of one of float, double, int16, int32, int64;
//       float16 and bfloat16 too from 27, whose `stash_type` (default 1,
//       float) names the type they compute in. delta = 0 is Error(input).
//   CumSum (11, 14)  running sums along the axis given by a 0-D int32 or
//       int64 input; exclusive = 1 leaves each element out of its own sum,
//       reverse = 1 sums from the end. float16 and bfloat16 from 14.
//   CumProd (26)  CumSum's contract with products (exclusive: 1 where the
//       running product is empty), for uint32, uint64, int32, int64,
//       float16, float, double and bfloat16.
//   EyeLike (9, 22)  a matrix of x's rank-2 shape, ones at [i, i + k], in
//       the type `dtype` (default: x's). bfloat16 from 22.
// Decisions: floating Range elements, sums and products are computed in
// double and rounded once per element (the reference rounds after every
// CumSum step in the input type); integers are exact (Range) or wrap modulo
// 2^bits on overflow (CumSum, CumProd, as numpy). Range-27's float16 and
// bfloat16 elements with stash_type 1 are thus start + i * delta rounded
// once from double: float's own evaluation, when exact, gives the same
// value, and no element is rounded twice; any other stash_type for them is
// Error(unsupported) (the text defines only 1), and stash_type is not read
// for the other types ("has no effect"). Range's element count is computed
// in double for floating types (numpy's arange, which ONNX's reference
// calls, does too), exactly for integers. A negative OneHot depth is
// Error(input); depth 0 gives an empty dim.
#include <cmath>
#include <cstring>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/indexing/ops.h"

namespace bnorm::eval {

namespace {

// Integer values of a numeric tensor: floating ones truncated toward zero
// (NaN as 0), uint64 beyond int64 saturated.
std::vector<int64_t> as_int64(const Tensor& t, const char* what) {
  if (!is_numeric_type(t.dtype)) fail(ErrorKind::input, "input '{}' of type {} is not numeric", what, dtype_name(t.dtype));
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (is_floating(t.dtype)) {
    const std::vector<double> v = load_values<double>(t);
    for (size_t i = 0; i < v.size(); ++i) out[i] = to_int<int64_t>(v[i]);
  } else if (t.dtype == DType::uint64) {
    const auto* p = t.data<uint64_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i] > uint64_t(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(p[i]);
  } else {
    out = load_values<int64_t>(t);
  }
  return out;
}

}  // namespace

Tensors op_one_hot(const OpContext& ctx) {
  const Tensor& ind = ctx.required(0, "indices");
  const std::vector<int64_t> depth_v = as_int64(ctx.required(1, "depth"), "depth");
  const Tensor& values = ctx.required(2, "values");
  if (ind.dtype == DType::bfloat16 || ctx.required(1, "depth").dtype == DType::bfloat16) {
    fail(ErrorKind::input, "indices and depth cannot be bfloat16");
  }
  if (depth_v.size() != 1 || ctx.input(1)->dims.size() > 1) fail(ErrorKind::input, "depth must hold one value");
  if (values.numel() != 2 || values.dims.size() != 1 || values.dtype == DType::bfloat16) {
    fail(ErrorKind::input, "values must be a rank-1 tensor of two elements (not bfloat16), not {} {}",
         dtype_name(values.dtype), shape_str(values.dims));
  }
  const int64_t depth = depth_v[0];
  if (depth < 0) fail(ErrorKind::input, "depth {} is negative", depth);
  const auto r = static_cast<int64_t>(ind.dims.size());
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", -1), r + 1);
  std::vector<int64_t> dims = ind.dims;
  dims.insert(dims.begin() + axis, depth);
  Tensor out(values.dtype, dims);
  const std::vector<int64_t> idx = as_int64(ind, "indices");
  const int64_t outer = product(ind.dims, 0, axis), inner = product(ind.dims, axis);
  const size_t es = dtype_size(values.dtype);
  const uint8_t* off = values.bytes.data();
  const uint8_t* on = off + es;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t hot = idx[o * inner + i];
      if (ctx.version >= 11 && hot < 0) hot += depth;
      for (int64_t d = 0; d < depth; ++d) {
        std::memcpy(out.bytes.data() + ((o * depth + d) * inner + i) * es, d == hot ? on : off, es);
      }
    }
  }
  return one_tensor(std::move(out));
}

namespace {

int64_t range_count(const Tensor& s, const Tensor& l, const Tensor& d) {
  if (is_floating(s.dtype)) {
    const double start = load_values<double>(s)[0], limit = load_values<double>(l)[0], delta = load_values<double>(d)[0];
    if (delta == 0) fail(ErrorKind::input, "delta is 0");
    const double n = std::ceil((limit - start) / delta);
    if (std::isnan(n) || n > 1e15) fail(ErrorKind::input, "Range of {} elements", n);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const auto start = static_cast<__int128>(as_int64(s, "start")[0]);
  const auto limit = static_cast<__int128>(as_int64(l, "limit")[0]);
  const auto delta = static_cast<__int128>(as_int64(d, "delta")[0]);
  if (delta == 0) fail(ErrorKind::input, "delta is 0");
  const __int128 span = limit - start;
  // ceil(span / delta), with division truncating toward zero.
  __int128 n = span / delta;
  if (span % delta != 0 && ((span > 0) == (delta > 0))) ++n;
  if (n > (__int128{1} << 60)) fail(ErrorKind::input, "Range of over 2^60 elements");
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

}  // namespace

Tensors op_range(const OpContext& ctx) {
  const Tensor& s = ctx.required(0, "start");
  const Tensor& l = ctx.required(1, "limit");
  const Tensor& d = ctx.required(2, "delta");
  const DType t = s.dtype;
  const bool half = t == DType::float16 || t == DType::bfloat16;
  const bool typed = t == DType::float32 || t == DType::float64 || t == DType::int16 || t == DType::int32 ||
                     t == DType::int64 || (half && ctx.version >= 27);
  if (!typed) fail(ErrorKind::input, "Range-{} does not take {} inputs", ctx.version, dtype_name(t));
  if (half) {
    const int64_t stash = attr_int(*ctx.node, "stash_type", 1);
    if (stash != 1) {
      fail(ErrorKind::unsupported, "stash_type {} is not supported for {} inputs (only 1, float)", stash,
           dtype_name(t));
    }
  }
  if (l.dtype != t || d.dtype != t) fail(ErrorKind::input, "start, limit and delta must have one type");
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) fail(ErrorKind::input, "start, limit and delta must be scalars");
  const int64_t n = range_count(s, l, d);
  Tensor out(t, {n});
  if (is_floating(t)) {
    const double start = load_values<double>(s)[0], delta = load_values<double>(d)[0];
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i) * delta;
    store_values(out, v.data());
  } else {
    const int64_t start = as_int64(s, "start")[0], delta = as_int64(d, "delta")[0];
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = start + i * delta;  // between start and limit: no overflow
    store_any(out, v.data());
  }
  return one_tensor(std::move(out));
}

namespace {

// Running sums (multiply = false) or products along the axis.
template <typename T, typename S>
void cumulate(const S* x, S* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse,
              bool multiply = false) {
  auto add = [multiply](T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      // Modulo 2^64, then to T: the wrap of T's own arithmetic.
      const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
      return static_cast<T>(multiply ? ua * ub : ua + ub);
    } else {
      return multiply ? a * b : a + b;
    }
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      T sum = multiply ? 1 : 0;
      for (int64_t step = 0; step < n; ++step) {
        const int64_t i = reverse ? n - 1 - step : step;
        const int64_t at = (o * n + i) * inner + in;
        const T v = static_cast<T>(x[at]);
        if (!exclusive) sum = add(sum, v);
        y[at] = static_cast<S>(sum);
        if (exclusive) sum = add(sum, v);
      }
    }
  }
}

// CumSum (multiply = false) or CumProd.
Tensors cumulative(const OpContext& ctx, bool multiply) {
  const Tensor& x = ctx.required(0, "x");
  const Tensor& axis_t = ctx.required(1, "axis");
  const DType t = x.dtype;
  const bool typed = t == DType::uint32 || t == DType::uint64 || t == DType::int32 || t == DType::int64 ||
                     t == DType::float32 || t == DType::float64 ||
                     ((multiply || ctx.version >= 14) && (t == DType::float16 || t == DType::bfloat16));
  if (!typed) fail(ErrorKind::input, "{}-{} does not take {} input", ctx.node->op_type(), ctx.version, dtype_name(t));
  const std::vector<int64_t> axis_v = read_ints(axis_t, "axis");
  if (axis_v.size() != 1 || axis_t.dims.size() > 1) fail(ErrorKind::input, "axis must be a 0-D tensor");
  const int64_t axis = normalize_axis(axis_v[0], static_cast<int64_t>(x.dims.size()));
  const bool exclusive = attr_int(*ctx.node, "exclusive", 0) != 0, reverse = attr_int(*ctx.node, "reverse", 0) != 0;
  const int64_t outer = product(x.dims, 0, axis), n = x.dims[axis], inner = product(x.dims, axis + 1);
  Tensor y(t, x.dims);
  if (is_floating(t)) {
    const std::vector<double> v = load_values<double>(x);
    std::vector<double> sums(v.size());
    cumulate<double>(v.data(), sums.data(), outer, n, inner, exclusive, reverse, multiply);
    store_values(y, sums.data());
  } else {
    with_numeric_type(t, "x", [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        cumulate<T>(x.data<T>(), y.data<T>(), outer, n, inner, exclusive, reverse, multiply);
      }
    });
  }
  return one_tensor(std::move(y));
}

}  // namespace

Tensors op_cum_sum(const OpContext& ctx) { return cumulative(ctx, false); }

Tensors op_cum_prod(const OpContext& ctx) { return cumulative(ctx, true); }

Tensors op_eye_like(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  if (x.dims.size() != 2) fail(ErrorKind::input, "input must have rank 2, not {}", x.dims.size());
  const auto t = static_cast<DType>(attr_int(*ctx.node, "dtype", static_cast<int64_t>(x.dtype)));
  for (DType d : {x.dtype, t}) {
    const bool ok = d == DType::boolean || (is_numeric_type(d) && (d != DType::bfloat16 || ctx.version >= 22));
    if (!ok) fail(ErrorKind::input, "EyeLike-{} does not take or make type {}", ctx.version, static_cast<int>(d));
  }
  const int64_t k = attr_int(*ctx.node, "k", 0), rows = x.dims[0], cols = x.dims[1];
  std::vector<double> v(static_cast<size_t>(checked_numel(x.dims)), 0.0);
  // Row i has its one at column i + k when that is inside; |k| may be huge.
  for (int64_t i = 0; i < rows; ++i) {
    if (k >= -i && k < cols - i) v[i * cols + i + k] = 1.0;
  }
  return one_tensor(make_any(t, x.dims, v));
}

}  // namespace bnorm::eval
