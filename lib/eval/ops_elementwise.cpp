// Elementwise arithmetic: Add, Sub, Mul, Div (numpy broadcasting; before
// version 7 the `broadcast` and `axis` attributes: broadcast = 0 needs equal
// shapes, broadcast = 1 aligns B at `axis`, or at the end without it),
// Sqrt, Reciprocal, Cast and CastLike (Cast to the type of input 2).
//
// Floating types compute in float (double for double) and round once;
// integer types compute in their own type (wrapping, as numpy does;
// integer division by zero is an error).
#include <cmath>
#include <cstring>
#include <type_traits>

#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/op.h"
#include "eval/ops.h"
#include "eval/ops_broadcast.h"

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
  out[0] = Tensor(a.dtype, broadcast_shapes(a.dims, db));
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

// One element of any numeric type, exactly (long double holds every int64,
// uint64, float and double value).
long double load_exact(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::float32: return t.data<float>()[i];
    case DType::float64: return t.data<double>()[i];
    case DType::float16: return kernels::f16_to_f32(t.data<kernels::f16>()[i]);
    case DType::bfloat16: return kernels::bf16_to_f32(t.data<kernels::bf16>()[i]);
    case DType::int8: return t.data<int8_t>()[i];
    case DType::uint8: return t.data<uint8_t>()[i];
    case DType::int16: return t.data<int16_t>()[i];
    case DType::uint16: return t.data<uint16_t>()[i];
    case DType::int32: return t.data<int32_t>()[i];
    case DType::uint32: return t.data<uint32_t>()[i];
    case DType::int64: return t.data<int64_t>()[i];
    case DType::uint64: return t.data<uint64_t>()[i];
    case DType::boolean: return t.data<uint8_t>()[i] != 0;
    default: fail(ErrorKind::unsupported, "Cast from {} is not supported", dtype_name(t.dtype));
  }
}

// Float to integer truncates toward zero (values out of range are undefined
// in ONNX; here they saturate).
template <typename I>
I to_integer(long double v) {
  if (std::isnan(v)) return 0;
  const long double lo = static_cast<long double>(std::numeric_limits<I>::lowest());
  const long double hi = static_cast<long double>(std::numeric_limits<I>::max());
  return static_cast<I>(std::trunc(std::min(std::max(v, lo), hi)));
}

// Cast to bfloat16 keeps the upper 16 bits of the float (truncation), as
// ONNX 1.12's reference and conformance data do (docs/semantics.md).
// Normalization outputs, by contrast, round to nearest even.
kernels::bf16 cast_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return {static_cast<uint16_t>((bits >> 16) | 0x0040u)};
  return {static_cast<uint16_t>(bits >> 16)};
}

void store_exact(Tensor& t, int64_t i, long double v) {
  switch (t.dtype) {
    case DType::float32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::float64: t.data<double>()[i] = static_cast<double>(v); break;
    case DType::float16: t.data<kernels::f16>()[i] = kernels::f64_to_f16(static_cast<double>(v)); break;
    case DType::bfloat16: t.data<kernels::bf16>()[i] = cast_to_bf16(static_cast<float>(v)); break;
    case DType::int8: t.data<int8_t>()[i] = to_integer<int8_t>(v); break;
    case DType::uint8: t.data<uint8_t>()[i] = to_integer<uint8_t>(v); break;
    case DType::int16: t.data<int16_t>()[i] = to_integer<int16_t>(v); break;
    case DType::uint16: t.data<uint16_t>()[i] = to_integer<uint16_t>(v); break;
    case DType::int32: t.data<int32_t>()[i] = to_integer<int32_t>(v); break;
    case DType::uint32: t.data<uint32_t>()[i] = to_integer<uint32_t>(v); break;
    case DType::int64: t.data<int64_t>()[i] = to_integer<int64_t>(v); break;
    case DType::uint64: t.data<uint64_t>()[i] = to_integer<uint64_t>(v); break;
    case DType::boolean: t.data<uint8_t>()[i] = v != 0; break;
    default: fail(ErrorKind::unsupported, "Cast to {} is not supported", dtype_name(t.dtype));
  }
}

Tensor cast_to(const Tensor& x, DType t) {
  if (dtype_size(t) == 0) fail(ErrorKind::unsupported, "Cast to {} is not supported", dtype_name(t));
  Tensor out(t, x.dims);
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) store_exact(out, i, load_exact(x, i));
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

Tensors op_cast(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const auto* to = find_attr(*ctx.node, "to");
  if (!to) fail(ErrorKind::input, "attribute 'to' is missing");
  // Cast-1 spelled `to` as a string ("FLOAT"); later versions as an int.
  DType t;
  if (to->type() == onnx::AttributeProto::STRING) {
    onnx::TensorProto::DataType parsed;
    if (!onnx::TensorProto::DataType_Parse(to->s(), &parsed)) fail(ErrorKind::input, "unknown type '{}'", to->s());
    t = static_cast<DType>(parsed);
  } else {
    t = static_cast<DType>(attr_int(*ctx.node, "to", 0));
  }
  return {cast_to(x, t)};
}

Tensors op_cast_like(const OpContext& ctx) {
  return {cast_to(ctx.required(0, "input"), ctx.required(1, "target_type").dtype)};
}

}  // namespace bnorm::eval
