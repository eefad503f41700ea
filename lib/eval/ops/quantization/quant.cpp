// Linear quantization: QuantizeLinear and DequantizeLinear (versions 10, 13,
// 19, 21, 23, 24, 25; 24 only adds float8e8m0 scales, 25 int2 and uint2) and DynamicQuantizeLinear-11. The integer ops
// (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) are in
// integer.cpp.
//
//   QuantizeLinear:   y = saturate(round_half_even(x / y_scale) + y_zero_point)
//                     (float8/float4 outputs: x / y_scale + y_zero_point
//                      rounded once to nearest even, `saturate` as Cast)
//   DequantizeLinear: y = (x - x_zero_point) * x_scale
//
// Per version: 10 per-tensor only; 13 `axis` (1-D scale: per-axis);
// 19 float16/bfloat16 x and scales, float8 outputs, `saturate`;
// 21 blocked quantization (`block_size`), `output_dtype` (Q), int16/uint16/
// int4/uint4; 23 float4e2m1, `precision` (Q), `output_dtype` (DQ), and the
// scale of Q may differ in type from x; 24 float8e8m0 scales (y_scale,
// x_scale; never a quantized type); 25 int2/uint2 (saturating to [-2, 1]
// and [0, 3]).
//
// Arithmetic, as ONNX's reference: Q divides in the precision type (the
// scale's type or `precision`): float for float; float16/bfloat16 round x
// and the quotient to that type (float division rounded once to a narrower
// type is that type's correctly rounded division); int32 scales divide in
// double. A float8e8m0 scale (a power of two, held exactly by float) is not
// a type to divide in: without `precision`, Q divides in float (decision);
// DQ needs `output_dtype`, since its output cannot be float8e8m0. The common
// case, float32 x with one float32 scale to or from uint8/int8, runs
// kernels/quantize.h's loops, the same bits. DQ computes (x - zero point) exactly, converts it to float,
// multiplies in float and rounds once to the output type. Decision: a NaN
// quotient quantizes to the zero point (the spec says nothing).
#include <cmath>
#include <limits>
#include <vector>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "eval/ops/quantization/ops.h"
#include "eval/ops/quantization/quant.h"
#include "kernels/quantize.h"

namespace bnorm::eval {

namespace {

bool integer_quant_type(DType t) {
  return t == DType::int8 || t == DType::uint8 || t == DType::int16 || t == DType::uint16 || t == DType::int4 ||
         t == DType::uint4 || t == DType::int2 || t == DType::uint2;
}

// The quantized types (Q's y, DQ's x) version `v` allows; DQ adds int32.
bool quant_type_allowed(DType t, int v) {
  if (t == DType::int8 || t == DType::uint8) return true;
  if (is_float8(t)) return v >= 19;
  if (t == DType::int16 || t == DType::uint16 || t == DType::int4 || t == DType::uint4) return v >= 21;
  if (t == DType::float4e2m1) return v >= 23;
  if (t == DType::int2 || t == DType::uint2) return v >= 25;
  return false;
}

bool half_or_float(DType t) { return t == DType::float32 || t == DType::float16 || t == DType::bfloat16; }

// A float8e8m0 scale, which versions 24 and later allow.
bool e8m0_scale(DType t, int v) { return v >= 24 && t == DType::float8e8m0; }

int64_t block_size(const OpContext& ctx) {
  const int64_t block = ctx.version >= 21 ? attr_int(*ctx.node, "block_size", 0) : 0;
  if (block < 0) fail(ErrorKind::input, "block_size is {}, must not be negative", block);
  return block;
}

// One scale for all of x.
bool per_tensor(const std::vector<int64_t>& sd, const OpContext& ctx) {
  return sd.size() <= 1 && product(sd) == 1 && block_size(ctx) == 0;
}

// When x (dims `xd`) has one scale or one per index of the axis, runs of
// `inner` elements that share a scale, scale r % d for run r; false for
// blocked or malformed scales (scale_index then decides).
bool scale_runs(const std::vector<int64_t>& xd, const std::vector<int64_t>& sd, const OpContext& ctx, int64_t& d,
                int64_t& inner) {
  d = 1;
  inner = product(xd);
  if (per_tensor(sd, ctx)) return true;
  if (ctx.version < 13 || block_size(ctx) != 0 || xd.empty()) return false;
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 1), static_cast<int64_t>(xd.size()));
  d = xd[static_cast<size_t>(axis)];
  inner = product(xd, static_cast<size_t>(axis) + 1);
  return sd.size() == 1 && sd[0] == d;
}

// For each element of x (dims `xd`), the index of its scale and zero point.
std::vector<int64_t> scale_index(const std::vector<int64_t>& xd, const std::vector<int64_t>& sd, const OpContext& ctx,
                                 const char* what) {
  const int64_t n = product(xd);
  const int64_t block = block_size(ctx);
  if (per_tensor(sd, ctx)) return std::vector<int64_t>(static_cast<size_t>(n), 0);
  if (ctx.version < 13) fail(ErrorKind::input, "{} must be a scalar at version {}", what, ctx.version);
  const auto rank = static_cast<int64_t>(xd.size());
  const int64_t axis = normalize_axis(ctx.version >= 13 ? attr_int(*ctx.node, "axis", 1) : 1, rank);
  const int64_t d = xd[static_cast<size_t>(axis)], inner = product(xd, static_cast<size_t>(axis) + 1);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  if (block == 0) {
    if (sd.size() != 1 || sd[0] != d) {
      fail(ErrorKind::input, "{} has shape {}: per-axis needs [{}] (axis {} of {})", what, shape_str(sd), d, axis,
           shape_str(xd));
    }
    for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = (i / inner) % d;
    return idx;
  }
  bool ok = sd.size() == xd.size();
  for (size_t k = 0; ok && k < xd.size(); ++k) {
    ok = static_cast<int64_t>(k) == axis ? sd[k] == (xd[k] + block - 1) / block : sd[k] == xd[k];
  }
  if (!ok) {
    fail(ErrorKind::input, "{} has shape {}, which does not block {} along axis {} by {}", what, shape_str(sd),
         shape_str(xd), axis, block);
  }
  const int64_t s = sd[static_cast<size_t>(axis)];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t outer = i / (d * inner), a = (i / inner) % d, in = i % inner;
    idx[static_cast<size_t>(i)] = (outer * s + a / block) * inner + in;
  }
  return idx;
}

// A zero point, when given, has the scale's shape.
void check_zero_point(const Tensor* zp, const Tensor& scale) {
  if (zp && zp->dims != scale.dims && !(product(zp->dims) == 1 && product(scale.dims) == 1)) {
    fail(ErrorKind::input, "the zero point has shape {}, the scale {}", shape_str(zp->dims), shape_str(scale.dims));
  }
}

// x / s in precision `p`.
double divide(double x, double s, DType p) {
  switch (p) {
    case DType::float32: return static_cast<float>(x) / static_cast<float>(s);
    case DType::float16: {
      const float xs = kernels::f16_to_f32(kernels::f64_to_f16(x));
      return kernels::f16_to_f32(kernels::f64_to_f16(xs / static_cast<float>(s)));
    }
    case DType::bfloat16: {
      const float xs = kernels::bf16_to_f32(kernels::f64_to_bf16(x));
      return kernels::bf16_to_f32(kernels::f64_to_bf16(xs / static_cast<float>(s)));
    }
    default: return x / s;
  }
}

DType quantize_output_type(const OpContext& ctx, const Tensor* zp) {
  const int64_t attr = ctx.version >= 21 ? attr_int(*ctx.node, "output_dtype", 0) : 0;
  DType t = zp ? zp->dtype : DType::uint8;
  if (attr != 0) {
    if (zp && static_cast<int64_t>(zp->dtype) != attr) {
      fail(ErrorKind::input, "output_dtype {} differs from the zero point's type {}", attr, dtype_name(zp->dtype));
    }
    t = static_cast<DType>(attr);
  }
  if (!quant_type_allowed(t, ctx.version)) {
    fail(dtype_size(t) == 0 ? ErrorKind::unsupported : ErrorKind::input, "QuantizeLinear-{} cannot produce {}",
         ctx.version, dtype_name(t));
  }
  return t;
}

// The division's precision type, after checking x's and the scale's types.
DType quantize_precision(const OpContext& ctx, const Tensor& x, const Tensor& scale) {
  const bool x_ok = x.dtype == DType::float32 || x.dtype == DType::int32 || (ctx.version >= 19 && half_or_float(x.dtype));
  if (!x_ok) fail(ErrorKind::input, "input 'x' of type {} is not allowed at version {}", dtype_name(x.dtype), ctx.version);
  const bool s_ok = ctx.version < 19 ? scale.dtype == DType::float32
                    : ctx.version < 23 ? scale.dtype == x.dtype
                                       : half_or_float(scale.dtype) || scale.dtype == DType::int32 ||
                                             e8m0_scale(scale.dtype, ctx.version);
  if (!s_ok) {
    fail(ErrorKind::input, "y_scale of type {} is not allowed with x of type {} at version {}", dtype_name(scale.dtype),
         dtype_name(x.dtype), ctx.version);
  }
  const int64_t precision = ctx.version >= 23 ? attr_int(*ctx.node, "precision", 0) : 0;
  if (precision == 0) return scale.dtype == DType::float8e8m0 ? DType::float32 : scale.dtype;
  const auto p = static_cast<DType>(precision);
  if (!half_or_float(p) && p != DType::int32) fail(ErrorKind::unsupported, "precision {} is not supported", precision);
  return p;
}

}  // namespace

void quantize_values(const std::vector<double>& q, const std::vector<double>& zp, Tensor& y, bool saturate) {
  const DType t = y.dtype;
  if (!integer_quant_type(t)) {
    for (size_t i = 0; i < q.size(); ++i) y.data<uint8_t>()[i] = minifloat_bits(t, q[i] + zp[i], saturate);
    return;
  }
  double lo = 0, hi = 0;
  switch (t) {
    case DType::int8: lo = -128; hi = 127; break;
    case DType::uint8: hi = 255; break;
    case DType::int16: lo = -32768; hi = 32767; break;
    case DType::uint16: hi = 65535; break;
    case DType::int4: lo = -8; hi = 7; break;
    case DType::int2: lo = -2; hi = 1; break;
    case DType::uint2: hi = 3; break;
    default: hi = 15; break;  // uint4
  }
  std::vector<double> v(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const double r = std::isnan(q[i]) ? 0.0 : std::nearbyint(q[i]);  // ties to even (default rounding mode)
    v[i] = std::min(std::max(r + zp[i], lo), hi);
  }
  y = Tensor::from_f64(t, y.dims, v);
}

Tensors op_quantize_linear(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "x");
  const Tensor& scale = ctx.required(1, "y_scale");
  const Tensor* zp = ctx.input(2);
  const DType precision = quantize_precision(ctx, x, scale);
  const DType t = quantize_output_type(ctx, zp);
  check_zero_point(zp, scale);
  int64_t d = 1, inner = 1;
  if (x.dtype == DType::float32 && scale.dtype == DType::float32 && precision == DType::float32 &&
      (t == DType::uint8 || t == DType::int8) && scale_runs(x.dims, scale.dims, ctx, d, inner)) {
    Tensors out(1);
    out[0] = tensor_for_overwrite(t, x.dims);  // every run of `inner` elements is written below
    const std::vector<double> vz = zp ? zp->to_f64() : std::vector<double>(static_cast<size_t>(d), 0.0);
    for (int64_t r = 0; inner > 0 && r < x.numel() / inner; ++r) {
      const int64_t k = r % d;
      kernels::quantize_f32(x.data<float>() + r * inner, static_cast<size_t>(inner), scale.data<float>()[k],
                            static_cast<int32_t>(vz[static_cast<size_t>(k)]), out[0].data<uint8_t>() + r * inner,
                            t == DType::int8);
    }
    return out;
  }
  const std::vector<int64_t> idx = scale_index(x.dims, scale.dims, ctx, "y_scale");
  const std::vector<double> vx = x.to_f64(), vs = scale.to_f64();
  const std::vector<double> vz = zp ? zp->to_f64() : std::vector<double>(vs.size(), 0.0);
  std::vector<double> q(vx.size()), z(vx.size());
  for (size_t i = 0; i < vx.size(); ++i) {
    const auto k = static_cast<size_t>(idx[i]);
    q[i] = divide(vx[i], vs[k], precision);
    z[i] = vz[k];
  }
  const bool saturate = ctx.version < 19 || attr_int(*ctx.node, "saturate", 1) != 0;
  Tensors out(1);
  out[0] = Tensor(t, x.dims);
  quantize_values(q, z, out[0], saturate);
  return out;
}

Tensors op_dequantize_linear(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "x");
  const Tensor& scale = ctx.required(1, "x_scale");
  const Tensor* zp = ctx.input(2);
  const int v = ctx.version;
  if (!quant_type_allowed(x.dtype, v) && x.dtype != DType::int32) {
    fail(ErrorKind::input, "input 'x' of type {} is not allowed at version {}", dtype_name(x.dtype), v);
  }
  if (zp && zp->dtype != x.dtype) {
    fail(ErrorKind::input, "x_zero_point has type {}, x {}", dtype_name(zp->dtype), dtype_name(x.dtype));
  }
  if (v < 19 ? scale.dtype != DType::float32 : !half_or_float(scale.dtype) && !e8m0_scale(scale.dtype, v)) {
    fail(ErrorKind::input, "x_scale of type {} is not allowed at version {}", dtype_name(scale.dtype), v);
  }
  DType t = scale.dtype;
  if (const int64_t attr = v >= 23 ? attr_int(*ctx.node, "output_dtype", 0) : 0) {
    t = static_cast<DType>(attr);
    if (!half_or_float(t)) fail(ErrorKind::input, "output_dtype {} is not float, float16 or bfloat16", attr);
  }
  if (t == DType::float8e8m0) fail(ErrorKind::input, "x_scale is float8e8m0: output_dtype must name y's type");
  check_zero_point(zp, scale);
  int64_t d = 1, inner = 1;
  if ((x.dtype == DType::uint8 || x.dtype == DType::int8) && scale.dtype == DType::float32 && t == DType::float32 &&
      scale_runs(x.dims, scale.dims, ctx, d, inner)) {
    Tensors out(1);
    out[0] = tensor_for_overwrite(t, x.dims);  // every run of `inner` elements is written below
    const std::vector<double> vz = zp ? zp->to_f64() : std::vector<double>(static_cast<size_t>(d), 0.0);
    for (int64_t r = 0; inner > 0 && r < x.numel() / inner; ++r) {
      const int64_t k = r % d;
      kernels::dequantize_f32(x.data<uint8_t>() + r * inner, static_cast<size_t>(inner), x.dtype == DType::int8,
                              static_cast<int32_t>(vz[static_cast<size_t>(k)]), scale.data<float>()[k],
                              out[0].data<float>() + r * inner);
    }
    return out;
  }
  const std::vector<int64_t> idx = scale_index(x.dims, scale.dims, ctx, "x_scale");
  const std::vector<double> vx = x.to_f64(), vs = scale.to_f64();
  const std::vector<double> vz = zp ? zp->to_f64() : std::vector<double>(vs.size(), 0.0);
  std::vector<float> y(vx.size());
  for (size_t i = 0; i < vx.size(); ++i) {
    const auto k = static_cast<size_t>(idx[i]);
    y[i] = static_cast<float>(vx[i] - vz[k]) * static_cast<float>(vs[k]);
  }
  return one_tensor(make_tensor(t, x.dims, y));
}

// DynamicQuantizeLinear-11, in float as the spec's formulas: the range
// [min(0, min x), max(0, max x)] mapped onto uint8 [0, 255]. All-zero (or
// empty) x gives scale 1/255 as ONNX's reference (the spec would divide by
// zero); NaNs in x are skipped by the min and max and quantize to the zero
// point.
Tensors op_dynamic_quantize_linear(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "x");
  if (x.dtype != DType::float32) fail(ErrorKind::input, "input 'x' has type {}, expected float", dtype_name(x.dtype));
  float lo = 0, hi = 0;
  kernels::range_f32(x.data<float>(), static_cast<size_t>(x.numel()), lo, hi);
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float initial = 0.0f - lo / scale;  // NaN only for an infinite x: then zero point 0
  const float zp = std::isnan(initial) ? 0.0f : std::nearbyint(std::min(std::max(initial, 0.0f), 255.0f));
  Tensors out(3);
  out[0] = Tensor(DType::uint8, x.dims);
  kernels::quantize_f32(x.data<float>(), static_cast<size_t>(x.numel()), scale, static_cast<int32_t>(zp),
                        out[0].data<uint8_t>(), false);
  out[1] = Tensor::from_f64(DType::float32, {}, {scale});
  out[2] = Tensor::from_f64(DType::uint8, {}, {zp});
  return out;
}

}  // namespace bnorm::eval
