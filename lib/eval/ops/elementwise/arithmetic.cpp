// Elementwise arithmetic: Add, Sub, Mul, Div (numpy broadcasting; before
// version 7 the `broadcast` and `axis` attributes: broadcast = 0 needs equal
// shapes, broadcast = 1 aligns B at `axis`, or at the end without it),
// Sqrt and Reciprocal (Cast and CastLike: cast.cpp).
//
// Floating types compute in float (double for double) and round once;
// integer types compute in their own type (wrapping, as numpy does;
// integer division by zero is an error).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

enum class Arith { add, sub, mul, div };

template <typename T>
T arith(Arith op, T x, T y) {
  switch (op) {
    case Arith::add: return static_cast<T>(x + y);
    case Arith::sub: return static_cast<T>(x - y);
    case Arith::mul: return static_cast<T>(x * y);
    case Arith::div:
      if constexpr (std::is_integral_v<T>) {
        if (y == 0) fail(ErrorKind::input, "integer division by zero");
      }
      return static_cast<T>(x / y);
  }
  return x;
}

template <typename S>
void integer_binary(Arith op, const Tensor& a, const std::vector<int64_t>& da, const Tensor& b,
                    const std::vector<int64_t>& db, Tensor& out) {
  broadcast_apply<S>(a.data<S>(), da, b.data<S>(), db, out.data<S>(), out.dims,
                     [op](S x, S y) { return arith<S>(op, x, y); });
}

Tensors binary(const OpContext& ctx, Arith op) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  if (a.dtype != b.dtype) {
    fail(ErrorKind::input, "inputs have types {} and {}, which must be equal", dtype_name(a.dtype), dtype_name(b.dtype));
  }
  const std::vector<int64_t> db = legacy_b_dims(ctx, a, b);
  Tensors out(1);
  const std::vector<int64_t> dy = broadcast_shapes(a.dims, db);
  if (a.dtype == DType::float32 || a.dtype == DType::float64) {
    // Straight from the operands' storage, into one of them when it dies
    // here and has Y's shape (elementwise: each element read before it is
    // written).
    const std::vector<int64_t> da = a.dims;
    const void *pa = a.bytes.data(), *pb = b.bytes.data();
    Tensor* spare = ctx.reusable(0, a.dtype, dy);
    if (!spare && db == dy) spare = ctx.reusable(1, a.dtype, dy);
    out[0] = spare ? std::move(*spare) : tensor_for_overwrite(a.dtype, dy);  // a and b are not used past this line
    if (out[0].dtype == DType::float32) {
      broadcast_apply<float>(static_cast<const float*>(pa), da, static_cast<const float*>(pb), db,
                             out[0].data<float>(), dy, [op](float x, float z) { return arith<float>(op, x, z); });
    } else {
      broadcast_apply<double>(static_cast<const double*>(pa), da, static_cast<const double*>(pb), db,
                              out[0].data<double>(), dy, [op](double x, double z) { return arith<double>(op, x, z); });
    }
    return out;
  }
  out[0] = Tensor(a.dtype, dy);
  Tensor& y = out[0];
  switch (a.dtype) {
    case DType::int8: integer_binary<int8_t>(op, a, a.dims, b, db, y); break;
    case DType::uint8: integer_binary<uint8_t>(op, a, a.dims, b, db, y); break;
    case DType::int16: integer_binary<int16_t>(op, a, a.dims, b, db, y); break;
    case DType::uint16: integer_binary<uint16_t>(op, a, a.dims, b, db, y); break;
    case DType::int32: integer_binary<int32_t>(op, a, a.dims, b, db, y); break;
    case DType::uint32: integer_binary<uint32_t>(op, a, a.dims, b, db, y); break;
    case DType::int64: integer_binary<int64_t>(op, a, a.dims, b, db, y); break;
    case DType::uint64: integer_binary<uint64_t>(op, a, a.dims, b, db, y); break;
    default:
      with_float_type(a.dtype, "input 'A'", [&](auto tag) {
        using T = decltype(tag);
        const std::vector<T> va = load_values<T>(a), vb = load_values<T>(b);
        std::vector<T> vy(static_cast<size_t>(y.numel()));
        broadcast_apply<T>(va.data(), a.dims, vb.data(), db, vy.data(), y.dims,
                           [op](T x, T z) { return arith<T>(op, x, z); });
        store_values(y, vy.data());
        return 0;
      });
  }
  return out;
}

template <typename F>
Tensors unary(const OpContext& ctx, F f) {
  const Tensor& x = ctx.required(0, "X");
  Tensors out(1);
  with_float_type(x.dtype, "input 'X'", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v = load_values<T>(x);
    for (T& e : v) e = f(e);
    out[0] = make_tensor(x.dtype, x.dims, v);
    return 0;
  });
  return out;
}

}  // namespace

Tensors op_add(const OpContext& ctx) { return binary(ctx, Arith::add); }
Tensors op_sub(const OpContext& ctx) { return binary(ctx, Arith::sub); }
Tensors op_mul(const OpContext& ctx) { return binary(ctx, Arith::mul); }
Tensors op_div(const OpContext& ctx) { return binary(ctx, Arith::div); }

Tensors op_sqrt(const OpContext& ctx) {
  return unary(ctx, [](auto v) { return std::sqrt(v); });
}

Tensors op_reciprocal(const OpContext& ctx) {
  return unary(ctx, [](auto v) { return decltype(v)(1) / v; });
}

}  // namespace bnorm::eval
