// Integer and quantized linear ops. The usual operands (integer_igemm.h:
// 8-bit data, zero points per tensor, per row or per output channel) go
// through kernels::igemm, exact in int32; anything else is computed by the
// reference path, the float64 MatMul and Conv of eval/ops/math/gemm.cpp /
// eval/ops/nn/conv/conv.cpp on the exact integers (x - zero point): sums
// of 8-bit products are exact in double far past int32. Both give the same
// results: the QLinear ops take igemm's sums only where they cannot wrap
// (K <= kIgemmExactK), and requantize them with kernels::requantize, the
// same double product and rounding as `requantize` below.
//
//   MatMulInteger-10:  Y (int32) = (A - a_zero_point) @ (B - b_zero_point)
//   ConvInteger-10:    y (int32) = conv(x - x_zero_point, w - w_zero_point)
//                      (padding adds zeros after the subtraction, i.e. the
//                      zero point, as ONNX's reference)
//   QLinearMatMul-10/21: y = saturate(round_half_even(((a - a_zp) @ (b - b_zp))
//                      * (a_scale * b_scale / y_scale)) + y_zp)
//   QLinearConv-10:    y = saturate(round_half_even((conv(x - x_zp, w - w_zp)
//                      + B) * (x_scale * w_scale / y_scale)) + y_zp)
//
// Zero points and scales broadcast as numpy does (the reference's way),
// except that a 1-D vector of M elements for a 2-D left operand [M, K] is
// per row ([M, 1]), as the spec describes. The scale product is formed in
// the scales' type (float, or float16/bfloat16 rounding each step, version
// 21), then applied in double. int32 results wrap (accumulation "may
// overflow only in 32 bits").
#include <cmath>
#include <vector>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/math/ops.h"
#include "eval/ops/nn/conv/ops.h"
#include "eval/ops/quantization/ops.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/quantization/integer_igemm.h"
#include "eval/ops/quantization/quant.h"
#include "kernels/quantize.h"

namespace bnorm::eval {

namespace {

bool int8_type(DType t) { return t == DType::int8 || t == DType::uint8; }

void require_type(const Tensor& t, const char* what, bool ok) {
  if (!ok) fail(ErrorKind::input, "input '{}' has type {}, which the op does not allow", what, dtype_name(t.dtype));
}

// Dims a zero point or scale takes against an operand of `dims`: a 1-D
// vector of M elements for a 2-D [M, K] left operand is per row.
std::vector<int64_t> param_dims(const Tensor& p, const std::vector<int64_t>& dims, bool left) {
  if (left && dims.size() == 2 && p.dims.size() == 1 && p.dims[0] == dims[0] && dims[0] != 1) return {dims[0], 1};
  return p.dims;
}

// Per element of `dims`, the value of `p` broadcast to it.
std::vector<double> broadcast_values(const Tensor& p, const std::vector<int64_t>& pd, const std::vector<int64_t>& dims,
                                     const char* what) {
  if (broadcast_shapes(pd, dims) != dims) {
    fail(ErrorKind::input, "'{}' of shape {} does not broadcast to {}", what, shape_str(p.dims), shape_str(dims));
  }
  const std::vector<double> v = p.to_f64();
  const std::vector<int64_t> off = broadcast_offsets(pd, dims);
  std::vector<double> out(off.size());
  for (size_t i = 0; i < off.size(); ++i) out[i] = v[static_cast<size_t>(off[i])];
  return out;
}

// x - zp as a float64 tensor (zp absent: x).
Tensor minus_zero_point(const Tensor& x, const Tensor* zp, bool left, const char* what) {
  std::vector<double> v = x.to_f64();
  if (zp) {
    if (zp->dtype != x.dtype) {
      fail(ErrorKind::input, "'{}' has type {}, its operand {}", what, dtype_name(zp->dtype), dtype_name(x.dtype));
    }
    const std::vector<double> z = broadcast_values(*zp, param_dims(*zp, x.dims, left), x.dims, what);
    for (size_t i = 0; i < v.size(); ++i) v[i] -= z[i];
  }
  return Tensor::from_f64(DType::float64, x.dims, v);
}

Tensor matmul_f64(const OpContext& ctx, const Tensor& a, const Tensor& b) {
  OpContext c = ctx;
  c.inputs = {&a, &b};
  c.fused = nullptr;
  return op_matmul(c)[0];
}

Tensor conv_f64(const OpContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias) {
  OpContext c = ctx;
  c.inputs = {&x, &w, bias};
  c.fused = nullptr;
  return op_conv(c)[0];
}

Tensor to_int32(const Tensor& y) {
  Tensor out(DType::int32, y.dims);
  const double* p = y.data<double>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    out.data<int32_t>()[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(p[i])));
  }
  return out;
}

// s1 * s2 / s3 in the scales' type.
double scale_product(double s1, double s2, double s3, DType t) {
  auto r = [t](float v) -> float {
    if (t == DType::float16) return kernels::f16_to_f32(kernels::f64_to_f16(v));
    if (t == DType::bfloat16) return kernels::bf16_to_f32(kernels::f64_to_bf16(v));
    return v;
  };
  return r(r(static_cast<float>(s1) * static_cast<float>(s2)) / static_cast<float>(s3));
}

// y = quantize(acc * scale product, y_zp) over acc's elements; `scale_of(i)`
// gives the three scales' offsets for element i.
Tensor requantize(const Tensor& acc, const std::vector<double>& s1, const std::vector<double>& s2,
                  const std::vector<double>& s3, DType scale_type, const Tensor& y_zp) {
  const double* p = acc.data<double>();
  std::vector<double> q(static_cast<size_t>(acc.numel())), z(q.size());
  const std::vector<double> vz = y_zp.to_f64();
  if (vz.size() != 1) fail(ErrorKind::unsupported, "y_zero_point of shape {} (only a scalar is supported)", shape_str(y_zp.dims));
  for (size_t i = 0; i < q.size(); ++i) {
    q[i] = p[i] * scale_product(s1[i], s2[i], s3[i], scale_type);
    z[i] = vz[0];
  }
  Tensor y(y_zp.dtype, acc.dims);
  quantize_values(q, z, y, true);
  return y;
}

bool scalar(const Tensor& t) { return t.dims.size() <= 1 && t.numel() == 1; }

// QLinearMatMul's requantization of igemm's sums, through
// kernels::requantize, when a_scale is a scalar or per row of a 2-D a,
// b_scale a scalar or per column, y_scale and y_zero_point scalars;
// false otherwise.
bool requantize_matmul(const Tensor& acc, const Tensor& a, const Tensor& as, const Tensor& bs, const Tensor& ys,
                       const Tensor& yz, Tensor& y) {
  const int64_t m = acc.dims[acc.dims.size() - 2], n = acc.dims.back();
  const bool row_scales = a.dims.size() == 2 && m != 1 && as.dims == std::vector<int64_t>{m};
  const bool column_scales = !scalar(bs) && bs.dims == std::vector<int64_t>{n};
  if (!(scalar(as) || row_scales) || !(scalar(bs) || column_scales) || !scalar(ys) || !scalar(yz) ||
      !int8_type(yz.dtype)) {
    return false;
  }
  const std::vector<double> s1 = as.to_f64(), s2 = bs.to_f64(), s3 = ys.to_f64();
  const auto zp = static_cast<int32_t>(yz.to_f64()[0]);
  const bool is_signed = yz.dtype == DType::int8;
  y = Tensor(yz.dtype, acc.dims);
  const int32_t* p = acc.data<int32_t>();
  uint8_t* q = y.data<uint8_t>();
  for (int64_t r = 0; r < (n ? acc.numel() / n : 0); ++r) {
    const double sa = s1[row_scales ? static_cast<size_t>(r % m) : 0];
    if (!column_scales) {
      kernels::requantize(p + r * n, static_cast<size_t>(n), 0, scale_product(sa, s2[0], s3[0], as.dtype), zp,
                          q + r * n, is_signed);
      continue;
    }
    for (int64_t j = 0; j < n; ++j) {
      kernels::requantize(p + r * n + j, 1, 0, scale_product(sa, s2[static_cast<size_t>(j)], s3[0], as.dtype), zp,
                          q + r * n + j, is_signed);
    }
  }
  return true;
}

}  // namespace

Tensors op_matmul_integer(const OpContext& ctx) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  require_type(a, "A", int8_type(a.dtype));
  require_type(b, "B", int8_type(b.dtype));
  Tensor acc;
  if (igemm_matmul(a, ctx.input(2), b, ctx.input(3), INT64_MAX, acc)) return one_tensor(std::move(acc));
  const Tensor af = minus_zero_point(a, ctx.input(2), true, "a_zero_point");
  const Tensor bf = minus_zero_point(b, ctx.input(3), false, "b_zero_point");
  return one_tensor(to_int32(matmul_f64(ctx, af, bf)));
}

Tensors op_qlinear_matmul(const OpContext& ctx) {
  const Tensor& a = ctx.required(0, "a");
  const Tensor& as = ctx.required(1, "a_scale");
  const Tensor& b = ctx.required(3, "b");
  const Tensor& bs = ctx.required(4, "b_scale");
  const Tensor& ys = ctx.required(6, "y_scale");
  const Tensor& yz = ctx.required(7, "y_zero_point");
  auto quant_ok = [&](DType t) { return int8_type(t) || (ctx.version >= 21 && is_float8(t)); };
  require_type(a, "a", quant_ok(a.dtype));
  require_type(b, "b", quant_ok(b.dtype));
  require_type(yz, "y_zero_point", quant_ok(yz.dtype));
  const bool scale_ok = as.dtype == bs.dtype && bs.dtype == ys.dtype &&
                        (as.dtype == DType::float32 ||
                         (ctx.version >= 21 && (as.dtype == DType::float16 || as.dtype == DType::bfloat16)));
  require_type(as, "a_scale", scale_ok);
  Tensor acc, y;
  if (igemm_matmul(a, &ctx.required(2, "a_zero_point"), b, &ctx.required(5, "b_zero_point"), kIgemmExactK, acc) &&
      requantize_matmul(acc, a, as, bs, ys, yz, y)) {
    return one_tensor(std::move(y));
  }
  const Tensor af = minus_zero_point(a, &ctx.required(2, "a_zero_point"), true, "a_zero_point");
  const Tensor bf = minus_zero_point(b, &ctx.required(5, "b_zero_point"), false, "b_zero_point");
  const Tensor c = matmul_f64(ctx, af, bf);
  const std::vector<double> s1 = broadcast_values(as, param_dims(as, a.dims, true), c.dims, "a_scale");
  const std::vector<double> s2 = broadcast_values(bs, bs.dims, c.dims, "b_scale");
  const std::vector<double> s3 = broadcast_values(ys, ys.dims, c.dims, "y_scale");
  return one_tensor(requantize(c, s1, s2, s3, as.dtype, yz));
}

namespace {

// w - w_zp with a scalar or per-output-channel (1-D of M) zero point.
Tensor weights_minus_zero_point(const Tensor& w, const Tensor* zp) {
  if (!zp || product(zp->dims) == 1 || w.dims.empty()) return minus_zero_point(w, zp, false, "w_zero_point");
  if (zp->dims.size() != 1 || zp->dims[0] != w.dims[0]) {
    fail(ErrorKind::input, "w_zero_point has shape {}, expected a scalar or [{}]", shape_str(zp->dims), w.dims[0]);
  }
  std::vector<int64_t> pd(w.dims.size(), 1);
  pd[0] = w.dims[0];
  Tensor z = *zp;
  z.dims = pd;
  return minus_zero_point(w, &z, false, "w_zero_point");
}

const Tensor* scalar_zero_point(const Tensor* zp, const char* what) {
  if (zp && product(zp->dims) != 1) fail(ErrorKind::input, "'{}' has shape {}, expected a scalar", what, shape_str(zp->dims));
  return zp;
}

// QLinearConv's requantization of igemm's sums, through
// kernels::requantize: per image and output channel c, acc + B[c] times
// the scale product of x_scale, w_scale (one or c's) and y_scale.
Tensor requantize_conv(const Tensor& acc, const Tensor& xs, const Tensor& ws, const Tensor& ys, const Tensor& yz,
                       const Tensor* bias) {
  const int64_t m = acc.dims[1], os = product(acc.dims, 2);
  const std::vector<double> s1 = xs.to_f64(), s2 = ws.to_f64(), s3 = ys.to_f64();
  const auto zp = static_cast<int32_t>(yz.to_f64()[0]);
  Tensor y(yz.dtype, acc.dims);
  for (int64_t r = 0; r < acc.numel() / std::max<int64_t>(os, 1); ++r) {
    const int64_t c = r % m;
    const double mult = scale_product(s1[0], s2[s2.size() == 1 ? 0 : static_cast<size_t>(c)], s3[0], DType::float32);
    kernels::requantize(acc.data<int32_t>() + r * os, static_cast<size_t>(os), bias ? bias->data<int32_t>()[c] : 0, mult,
                        zp, y.data<uint8_t>() + r * os, yz.dtype == DType::int8);
  }
  return y;
}

}  // namespace

Tensors op_conv_integer(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "x");
  const Tensor& w = ctx.required(1, "w");
  require_type(x, "x", int8_type(x.dtype));
  require_type(w, "w", int8_type(w.dtype));
  Tensor acc;
  if (igemm_conv(ctx, x, ctx.input(2), w, ctx.input(3), INT64_MAX, acc)) return one_tensor(std::move(acc));
  const Tensor xf = minus_zero_point(x, scalar_zero_point(ctx.input(2), "x_zero_point"), false, "x_zero_point");
  const Tensor wf = weights_minus_zero_point(w, ctx.input(3));
  return one_tensor(to_int32(conv_f64(ctx, xf, wf, nullptr)));
}

Tensors op_qlinear_conv(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "x");
  const Tensor& xs = ctx.required(1, "x_scale");
  const Tensor& w = ctx.required(3, "w");
  const Tensor& ws = ctx.required(4, "w_scale");
  const Tensor& ys = ctx.required(6, "y_scale");
  const Tensor& yz = ctx.required(7, "y_zero_point");
  const Tensor* bias = ctx.input(8);
  require_type(x, "x", int8_type(x.dtype));
  require_type(w, "w", int8_type(w.dtype));
  require_type(yz, "y_zero_point", int8_type(yz.dtype));
  for (const Tensor* s : {&xs, &ws, &ys}) require_type(*s, "scale", s->dtype == DType::float32);
  if (bias) require_type(*bias, "B", bias->dtype == DType::int32);
  if (product(xs.dims) != 1 || product(ys.dims) != 1) fail(ErrorKind::input, "x_scale and y_scale must be scalars");
  // w_scale: a scalar or one per output channel (dim 0 of w, 1 of y).
  const int64_t m = w.dims.empty() ? 1 : w.dims[0];
  if (product(ws.dims) != 1 && (ws.dims.size() != 1 || ws.dims[0] != m)) {
    fail(ErrorKind::input, "w_scale has shape {}, expected a scalar or [{}]", shape_str(ws.dims), m);
  }
  Tensor fast;
  if ((!bias || bias->dims == std::vector<int64_t>{m}) && product(yz.dims) == 1 &&
      igemm_conv(ctx, x, &ctx.required(2, "x_zero_point"), w, &ctx.required(5, "w_zero_point"), kIgemmExactK, fast)) {
    return one_tensor(requantize_conv(fast, xs, ws, ys, yz, bias));
  }
  const Tensor xf = minus_zero_point(x, scalar_zero_point(&ctx.required(2, "x_zero_point"), "x_zero_point"), false,
                                     "x_zero_point");
  const Tensor wf = weights_minus_zero_point(w, &ctx.required(5, "w_zero_point"));
  Tensor bf;
  if (bias) bf = Tensor::from_f64(DType::float64, bias->dims, bias->to_f64());
  const Tensor acc = conv_f64(ctx, xf, wf, bias ? &bf : nullptr);
  std::vector<int64_t> wsd(acc.dims.size(), 1);
  if (wsd.size() > 1) wsd[1] = product(ws.dims);
  const auto n = static_cast<size_t>(acc.numel());
  const std::vector<double> s1(n, xs.to_f64()[0]), s3(n, ys.to_f64()[0]);
  const std::vector<double> s2 = broadcast_values(ws, wsd, acc.dims, "w_scale");
  return one_tensor(requantize(acc, s1, s2, s3, DType::float32, yz));
}

}  // namespace bnorm::eval
