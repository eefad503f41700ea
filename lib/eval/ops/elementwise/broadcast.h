// What the op families share beyond numeric.h: the broadcasting loop, the
// pre-7 `broadcast`/`axis` attributes, element-type dispatch over every
// numeric type, and element offsets for ops that move data without
// arithmetic.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "eval/run/numeric.h"
#include "eval/run/op.h"

namespace bnorm::eval {

// out = f(a, b) over the broadcast shape `dout`; the innermost dimension is a
// plain loop.
template <typename T, typename U, typename R, typename F>
void broadcast_apply(const T* a, const std::vector<int64_t>& da, const U* b, const std::vector<int64_t>& db,
                     R* out, const std::vector<int64_t>& dout, F f) {
  const int64_t total = product(dout);
  if (total == 0) return;
  if (da == dout && db == dout) {
    for (int64_t i = 0; i < total; ++i) out[i] = f(a[i], b[i]);
    return;
  }
  const size_t rank = dout.size();
  if (rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  const std::vector<int64_t> sa = broadcast_strides(da, dout), sb = broadcast_strides(db, dout);
  const int64_t inner = dout[rank - 1], ia = sa[rank - 1], ib = sb[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t k = 0; k < inner; ++k) out[o + k] = f(a[oa + k * ia], b[ob + k * ib]);
    // Advance the index over the outer dimensions.
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      oa += sa[d];
      ob += sb[d];
      if (idx[d] < dout[d]) break;
      oa -= sa[d] * idx[d];
      ob -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// For each element of `out_dims` (C order), the offset of the element of a
// tensor of `dims` that broadcasts to it.
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims);

// A tensor of x's type and dims maps[k].size() whose element (i_0, ...,
// i_{r-1}) is x's element (maps[0][i_0], ..., maps[r-1][i_{r-1}]), or the
// one element `fill` (bytes of x's type, zero when empty) where an index is
// -1. Serves Gather, Slice, Tile, Expand and Pad.
Tensor remap(const Tensor& x, const std::vector<std::vector<int64_t>>& maps, const std::vector<uint8_t>& fill = {});

// Input B's shape as a version < 7 binary node sees it: with broadcast = 0
// it must equal A's; with broadcast = 1 it aligns at `axis`, or at the end.
// From 7 on: B's own shape (numpy broadcasting).
std::vector<int64_t> legacy_b_dims(const OpContext& ctx, const Tensor& a, const Tensor& b);

// Calls f(T{}) with the type ops compute `t` in: float for float, float16
// and bfloat16, double for double, the type itself for integers, uint8_t
// for bool. Anything else is Error(unsupported) naming `what`.
template <typename F>
auto with_numeric_type(DType t, const char* what, F&& f) {
  switch (t) {
    case DType::int8: return f(int8_t{});
    case DType::uint8:
    case DType::boolean: return f(uint8_t{});
    case DType::int16: return f(int16_t{});
    case DType::uint16: return f(uint16_t{});
    case DType::int32: return f(int32_t{});
    case DType::uint32: return f(uint32_t{});
    case DType::int64: return f(int64_t{});
    case DType::uint64: return f(uint64_t{});
    default: return with_float_type(t, what, f);
  }
}

// `v` as integer type I: truncated toward zero, saturated, NaN as 0.
template <typename I, typename T>
I to_int(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return 0;
    const auto lo = static_cast<long double>(std::numeric_limits<I>::lowest());
    const auto hi = static_cast<long double>(std::numeric_limits<I>::max());
    const long double x = std::trunc(static_cast<long double>(v));
    return x <= lo ? std::numeric_limits<I>::lowest() : x >= hi ? std::numeric_limits<I>::max() : static_cast<I>(x);
  } else {
    return static_cast<I>(v);
  }
}

// Stores `v` (out.numel() values) into `out` of any numeric type: floating
// types round once, integers as to_int, bool as v != 0.
template <typename T>
void store_any(Tensor& out, const T* v) {
  const int64_t n = out.numel();
  auto cast_all = [&](auto tag) {
    using S = decltype(tag);
    auto* p = out.data<S>();
    for (int64_t i = 0; i < n; ++i) p[i] = to_int<S>(v[i]);
  };
  switch (out.dtype) {
    case DType::int8: cast_all(int8_t{}); break;
    case DType::uint8: cast_all(uint8_t{}); break;
    case DType::int16: cast_all(int16_t{}); break;
    case DType::uint16: cast_all(uint16_t{}); break;
    case DType::int32: cast_all(int32_t{}); break;
    case DType::uint32: cast_all(uint32_t{}); break;
    case DType::int64: cast_all(int64_t{}); break;
    case DType::uint64: cast_all(uint64_t{}); break;
    case DType::boolean: {
      auto* p = out.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = v[i] != 0;
      break;
    }
    default: store_values(out, v);
  }
}

template <typename T>
Tensor make_any(DType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  Tensor out(t, std::move(dims));
  store_any(out, v.data());
  return out;
}

}  // namespace bnorm::eval
