// Cast and CastLike (Cast to the type of input 2), split from
// arithmetic.cpp: every numeric type bnorm holds, to and from (strings and
// complex refused as unsupported). Versions: 19 added float8 types and
// `saturate` (default 1), 21 int4/uint4, 23 float4e2m1, 24 float8e8m0 and
// `round_mode` ("up" by default, "down", "nearest"), 25 int2/uint2.
// Floating results round once to nearest even (bfloat16 too, as ONNX
// specifies); float8 out of range values per the spec's tables
// (kernels/minifloat.h); float8e8m0 as round_mode and saturate say, from
// the exact value (kernels/e8m0.h); integer to integer wraps, float to
// integer truncates toward zero; to the 4-bit and 2-bit integer types both
// keep the low bits (below).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/run/op.h"
#include "kernels/e8m0.h"
#include "kernels/half.h"
#include "model/attrs.h"

namespace bnorm::eval {

namespace {

// One element of any numeric type: its exact value (long double holds
// every int64, uint64, float and double value) and, for integer and bool
// sources, its two's complement bits (an integer cast to an integer wraps).
struct Elem {
  long double v = 0;
  bool integral = false;
  uint64_t bits = 0;
};

Elem integral_elem(int64_t v) { return {static_cast<long double>(v), true, static_cast<uint64_t>(v)}; }
Elem unsigned_elem(uint64_t v) { return {static_cast<long double>(v), true, v}; }

Elem load_elem(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::float32: return {t.data<float>()[i]};
    case DType::float64: return {t.data<double>()[i]};
    case DType::float16: return {kernels::f16_to_f32(t.data<kernels::f16>()[i])};
    case DType::bfloat16: return {kernels::bf16_to_f32(t.data<kernels::bf16>()[i])};
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float8e8m0:
    case DType::float4e2m1: return {minifloat_value(t.dtype, t.data<uint8_t>()[i])};
    case DType::int2:
    case DType::int4:
    case DType::int8: return integral_elem(t.data<int8_t>()[i]);
    case DType::int16: return integral_elem(t.data<int16_t>()[i]);
    case DType::int32: return integral_elem(t.data<int32_t>()[i]);
    case DType::int64: return integral_elem(t.data<int64_t>()[i]);
    case DType::uint2:
    case DType::uint4:
    case DType::uint8: return unsigned_elem(t.data<uint8_t>()[i]);
    case DType::uint16: return unsigned_elem(t.data<uint16_t>()[i]);
    case DType::uint32: return unsigned_elem(t.data<uint32_t>()[i]);
    case DType::uint64: return unsigned_elem(t.data<uint64_t>()[i]);
    case DType::boolean: return unsigned_elem(t.data<uint8_t>()[i] != 0);
    default: fail(ErrorKind::unsupported, "Cast from {} is not supported", dtype_name(t.dtype));
  }
}

// Float to integer truncates toward zero. Out of range is undefined in
// ONNX; here it saturates (NaN gives 0).
template <typename I>
I float_to_integer(long double v) {
  if (std::isnan(v)) return 0;
  const long double lo = static_cast<long double>(std::numeric_limits<I>::lowest());
  const long double hi = static_cast<long double>(std::numeric_limits<I>::max());
  return static_cast<I>(std::trunc(std::min(std::max(v, lo), hi)));
}

// Integers wrap (the low bits, reinterpreted: 200 -> int8 -56), as the spec
// says; floats truncate (above).
template <typename I>
I to_integer(const Elem& e) {
  return e.integral ? static_cast<I>(e.bits) : float_to_integer<I>(e.v);
}

// int4 / uint4 keep the low 4 bits of the integer (`width` 4), int2 / uint2
// the low 2 bits (`width` 2), from floats after truncation toward zero: what
// ONNX's reference (ml_dtypes) gives for out of range floats (-9.0 -> int4
// 7; ONNX's data for float -3.0 -> int2 is 1), which the spec leaves
// undefined. Signed results are held sign-extended (model/tensor.h).
uint8_t to_low_bits(const Elem& e, bool is_signed, int width) {
  const uint64_t bits = e.integral ? e.bits : static_cast<uint64_t>(float_to_integer<int64_t>(e.v));
  const auto mask = static_cast<uint8_t>((1u << width) - 1);
  uint8_t v = bits & mask;
  if (is_signed && (v & (1u << (width - 1)))) v |= static_cast<uint8_t>(~mask);
  return v;
}

// How a value becomes a float8 or float8e8m0 element.
struct Rounding {
  bool saturate = true;
  kernels::E8m0Round e8m0 = kernels::E8m0Round::up;
};

// Floating targets round once to nearest even from the exact value (a
// double is not first rounded to float, nor a float to bfloat16 by
// truncation); float8 overflow follows the Cast tables for `saturate`;
// float8e8m0 rounds the exact value (int64 too) as `round_mode` says.
void store_elem(Tensor& t, int64_t i, const Elem& e, const Rounding& r) {
  const bool saturate = r.saturate;
  const auto d = static_cast<double>(e.v);  // exact for every source except int64/uint64 past 2^53
  switch (t.dtype) {
    case DType::float32: t.data<float>()[i] = static_cast<float>(e.v); break;
    case DType::float64: t.data<double>()[i] = d; break;
    case DType::float16: t.data<kernels::f16>()[i] = kernels::f64_to_f16(d); break;
    case DType::bfloat16: t.data<kernels::bf16>()[i] = kernels::f64_to_bf16(d); break;
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float4e2m1: t.data<uint8_t>()[i] = minifloat_bits(t.dtype, d, saturate); break;
    case DType::float8e8m0: t.data<uint8_t>()[i] = kernels::to_e8m0(e.v, r.e8m0, saturate); break;
    case DType::int4: t.data<uint8_t>()[i] = to_low_bits(e, true, 4); break;
    case DType::uint4: t.data<uint8_t>()[i] = to_low_bits(e, false, 4); break;
    case DType::int2: t.data<uint8_t>()[i] = to_low_bits(e, true, 2); break;
    case DType::uint2: t.data<uint8_t>()[i] = to_low_bits(e, false, 2); break;
    case DType::int8: t.data<int8_t>()[i] = to_integer<int8_t>(e); break;
    case DType::uint8: t.data<uint8_t>()[i] = to_integer<uint8_t>(e); break;
    case DType::int16: t.data<int16_t>()[i] = to_integer<int16_t>(e); break;
    case DType::uint16: t.data<uint16_t>()[i] = to_integer<uint16_t>(e); break;
    case DType::int32: t.data<int32_t>()[i] = to_integer<int32_t>(e); break;
    case DType::uint32: t.data<uint32_t>()[i] = to_integer<uint32_t>(e); break;
    case DType::int64: t.data<int64_t>()[i] = to_integer<int64_t>(e); break;
    case DType::uint64: t.data<uint64_t>()[i] = to_integer<uint64_t>(e); break;
    case DType::boolean: t.data<uint8_t>()[i] = e.v != 0; break;  // NaN is true
    default: fail(ErrorKind::unsupported, "Cast to {} is not supported", dtype_name(t.dtype));
  }
}

// The version of Cast/CastLike that added a type (19: float8, 21: int4 and
// uint4, 23: float4e2m1, 24: float8e8m0, 25: int2 and uint2); 0 for the
// older ones. A type used before it existed makes the node invalid.
int version_adding(DType t) {
  if (is_float8(t)) return 19;
  if (t == DType::int4 || t == DType::uint4) return 21;
  if (t == DType::float4e2m1) return 23;
  if (t == DType::float8e8m0) return 24;
  if (is_2bit(t)) return 25;
  return 0;
}

// Cast-24's `round_mode`, spelled as the spec does.
kernels::E8m0Round e8m0_round_mode(const OpContext& ctx) {
  const std::string mode = attr_string(*ctx.node, "round_mode", "up");
  if (mode == "up") return kernels::E8m0Round::up;
  if (mode == "down") return kernels::E8m0Round::down;
  if (mode == "nearest") return kernels::E8m0Round::nearest;
  fail(ErrorKind::input, "round_mode is '{}', must be 'up', 'down' or 'nearest'", mode);
}

Tensor cast_to(const OpContext& ctx, const Tensor& x, DType t) {
  const auto code = static_cast<int32_t>(t);
  if (code < 1 || code > 26) fail(ErrorKind::input, "'to' is {}, not a TensorProto data type", code);
  // Strings: bnorm holds none; complex: no Tensor form.
  if (dtype_size(t) == 0) fail(ErrorKind::unsupported, "Cast to {} is not supported", dtype_name(t));
  for (DType used : {x.dtype, t}) {
    if (ctx.version < version_adding(used)) {
      fail(ErrorKind::input, "type {} needs version {} of the op, the node has version {}", dtype_name(used),
           version_adding(used), ctx.version);
    }
  }
  // `saturate` (19+) only concerns float8 targets, `round_mode` (24+) float8e8m0.
  Rounding rounding;
  rounding.saturate = ctx.version < 19 || attr_int(*ctx.node, "saturate", 1) != 0;
  if (t == DType::float8e8m0) rounding.e8m0 = e8m0_round_mode(ctx);
  Tensor out(t, x.dims);
  const int64_t n = x.numel();
  // Integers to float, the dequantization of integer ops' results: one
  // rounding of the exact value either way, done here in one loop.
  if (t == DType::float32 && (x.dtype == DType::int32 || x.dtype == DType::int8 || x.dtype == DType::uint8)) {
    float* y = out.data<float>();
    if (x.dtype == DType::int32) std::copy(x.data<int32_t>(), x.data<int32_t>() + n, y);
    if (x.dtype == DType::int8) std::copy(x.data<int8_t>(), x.data<int8_t>() + n, y);
    if (x.dtype == DType::uint8) std::copy(x.data<uint8_t>(), x.data<uint8_t>() + n, y);
    return out;
  }
  for (int64_t i = 0; i < n; ++i) store_elem(out, i, load_elem(x, i), rounding);
  return out;
}

}  // namespace

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
    const int64_t code = attr_int(*ctx.node, "to", 0);
    if (code < 1 || code > 26) fail(ErrorKind::input, "'to' is {}, not a TensorProto data type", code);
    t = static_cast<DType>(code);
  }
  return one_tensor(cast_to(ctx, x, t));
}

Tensors op_cast_like(const OpContext& ctx) {
  return one_tensor(cast_to(ctx, ctx.required(0, "input"), ctx.required(1, "target_type").dtype));
}

}  // namespace bnorm::eval
