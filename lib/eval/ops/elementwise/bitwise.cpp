// Binary elementwise integer ops with numpy broadcasting, and BitwiseNot.
//
//   Mod (10, 13: types only)  C = A mod B, A and B of one type.
//       fmod = 0: integers only (a floating type must set fmod = 1), the
//                 sign of the divisor as Python's %: a - floor(a / b) * b.
//       fmod = 1: C's fmod, the sign of the dividend: a - trunc(a / b) * b.
//                 Floating types (exact in double, rounded once, which is
//                 exact too); integers as well, as ONNX's own conformance
//                 test test_mod_int64_fmod does.
//       An integer divisor of 0 gives 0 (numpy's result; the spec leaves it
//       platform dependent).
//   BitShift (11)  Z = X << Y or X >> Y (direction "LEFT" / "RIGHT"),
//                  unsigned types; a shift by the bit width or more gives 0
//                  (numpy's result; C++ leaves it undefined).
//   BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (18)  integer types.
#include <cmath>
#include <type_traits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

bool is_unsigned_int(DType t) {
  return t == DType::uint8 || t == DType::uint16 || t == DType::uint32 || t == DType::uint64;
}

bool is_signed_int(DType t) {
  return t == DType::int8 || t == DType::int16 || t == DType::int32 || t == DType::int64;
}

// Calls f(T{}) with the storage type of integer type `t`; anything else is
// Error(input) naming `op`.
template <typename F>
void with_int_type(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::int8: f(int8_t{}); break;
    case DType::int16: f(int16_t{}); break;
    case DType::int32: f(int32_t{}); break;
    case DType::int64: f(int64_t{}); break;
    case DType::uint8: f(uint8_t{}); break;
    case DType::uint16: f(uint16_t{}); break;
    case DType::uint32: f(uint32_t{}); break;
    case DType::uint64: f(uint64_t{}); break;
    default: fail(ErrorKind::input, "{} takes integer types, not {}", op, dtype_name(t));
  }
}

// C = f(A, B) over the broadcast shape, on the integer storage type of A.
template <typename F>
Tensors int_binary(const OpContext& ctx, const char* op, F f) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  if (a.dtype != b.dtype) {
    fail(ErrorKind::input, "inputs have types {} and {}, which must be equal", dtype_name(a.dtype),
         dtype_name(b.dtype));
  }
  const std::vector<int64_t> dims = broadcast_shapes(a.dims, b.dims);
  Tensors out(1);
  with_int_type(a.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    out[0] = Tensor(a.dtype, dims);
    broadcast_apply(a.data<T>(), a.dims, b.data<T>(), b.dims, out[0].data<T>(), dims,
                    [&f](T x, T y) { return static_cast<T>(f(x, y)); });
  });
  return out;
}

// Truncated remainder; -1 divides everything (INT_MIN % -1 traps on x86).
template <typename T>
T rem_trunc(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

// Floored remainder: the sign of the divisor, as Python's %.
template <typename T>
T rem_floor(T a, T b) {
  T r = rem_trunc(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  }
  return r;
}

}  // namespace

Tensors op_mod(const OpContext& ctx) {
  const int64_t fmod = attr_int(*ctx.node, "fmod", 0);
  if (fmod != 0 && fmod != 1) fail(ErrorKind::input, "fmod = {} is neither 0 nor 1", fmod);
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  if (!is_floating(a.dtype)) {
    return int_binary(ctx, "Mod", [fmod](auto x, auto y) { return fmod ? rem_trunc(x, y) : rem_floor(x, y); });
  }
  if (fmod == 0) fail(ErrorKind::input, "Mod of floating type {} needs fmod = 1", dtype_name(a.dtype));
  if (a.dtype != b.dtype) {
    fail(ErrorKind::input, "inputs have types {} and {}, which must be equal", dtype_name(a.dtype),
         dtype_name(b.dtype));
  }
  const std::vector<int64_t> dims = broadcast_shapes(a.dims, b.dims);
  const std::vector<double> va = load_values<double>(a), vb = load_values<double>(b);
  std::vector<double> r(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "Mod's output")));
  broadcast_apply(va.data(), a.dims, vb.data(), b.dims, r.data(), dims,
                  [](double x, double y) { return std::fmod(x, y); });
  Tensors out(1);
  out[0] = make_tensor(a.dtype, dims, r);
  return out;
}

Tensors op_bit_shift(const OpContext& ctx) {
  const std::string direction = attr_string(*ctx.node, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    fail(ErrorKind::input, "direction = '{}' is neither 'LEFT' nor 'RIGHT'", direction);
  }
  const bool left = direction == "LEFT";
  const DType t = ctx.required(0, "X").dtype;
  if (!is_unsigned_int(t)) fail(ErrorKind::input, "BitShift takes unsigned integer types, not {}", dtype_name(t));
  return int_binary(ctx, "BitShift", [left](auto x, auto s) {
    using T = decltype(x);
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(s) >= sizeof(T) * 8) return T(0);
    // Shift in the promoted type, then drop the bits beyond T's width.
    return left ? static_cast<T>(static_cast<U>(static_cast<uint64_t>(x) << s)) : static_cast<T>(x >> s);
  });
}

namespace {

template <typename F>
Tensors bitwise(const OpContext& ctx, const char* op, F f) {
  const DType t = ctx.required(0, "A").dtype;
  if (!is_signed_int(t) && !is_unsigned_int(t)) fail(ErrorKind::input, "{} takes integer types, not {}", op, dtype_name(t));
  return int_binary(ctx, op, f);
}

}  // namespace

Tensors op_bitwise_and(const OpContext& ctx) {
  return bitwise(ctx, "BitwiseAnd", [](auto x, auto y) { return x & y; });
}

Tensors op_bitwise_or(const OpContext& ctx) {
  return bitwise(ctx, "BitwiseOr", [](auto x, auto y) { return x | y; });
}

Tensors op_bitwise_xor(const OpContext& ctx) {
  return bitwise(ctx, "BitwiseXor", [](auto x, auto y) { return x ^ y; });
}

Tensors op_bitwise_not(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  Tensors out(1);
  with_int_type(x.dtype, "BitwiseNot", [&](auto tag) {
    using T = decltype(tag);
    out[0] = Tensor(x.dtype, x.dims);
    const T* p = x.data<T>();
    T* q = out[0].data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) q[i] = static_cast<T>(~p[i]);
  });
  return out;
}

}  // namespace bnorm::eval
