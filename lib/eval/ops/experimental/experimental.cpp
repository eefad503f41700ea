// The experimental ops of ONNX <= 1.4 (no versioned schema: bnorm's table
// gives them version 1 and removes them at opset 10), as ONNX 1.4's
// onnx/defs/experiments/defs.cc defined them. Every one is registered at
// version 1 only.
//
//   Affine              y = alpha * x + beta (alpha 1, beta 0 by default)
//   ScaledTanh          y = alpha * tanh(beta * x)
//   ParametricSoftplus  y = alpha * ln(exp(beta * x) + 1)
//                       (alpha, beta have no default in the schema: a node
//                       without them is refused)
//   Scale               y = scale * x (scale 1 by default)
//   ImageScaler         x [N,C,H,W]: y = scale * x + bias[c]
//   Crop                x [N,C,H,W], border = (left, top, right, bottom):
//                       rows [top, H - bottom), columns [left, W - right);
//                       with scale = (height, width): rows [top, top +
//                       height), columns [left, left + width)
//   DynamicSlice        Slice-10 without steps: starts, ends, optional axes
//                       as inputs
//   ConstantFill        `value` (float attribute) as `dtype` (float, int32,
//                       int64, bool) in the shape of the `shape` attribute,
//                       or of the input's dims, or of the input's values
//                       (input_as_shape), plus `extra_shape`
//   GivenTensorFill     `values` in the shape of `shape`, or of the input's
//                       dims plus `extra_shape`
// Floating ops compute in float64 and round once to the input's type.
//
// GRUUnit is not implemented: ONNX's schema has no formula, names its gates
// "forget, update, and output" and types seq_lengths and t as float, while
// the one implementation (Caffe2's GRUUnitOp) reads them as int32 and uses
// only the last two gate blocks; an ONNX GRUUnit node has no exact meaning.
#include <cmath>
#include <cstring>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/experimental/ops.h"
#include "eval/ops/tensor/ops.h"

namespace bnorm::eval {

namespace {

// The experimental float ops' schemas allow float16, float and double.
void require_float_type(const Tensor& x, const char* what) {
  if (x.dtype != DType::float16 && x.dtype != DType::float32 && x.dtype != DType::float64) {
    fail(ErrorKind::input, "input '{}' is {}; the schema allows float16, float and double", what,
         dtype_name(x.dtype));
  }
}

float required_float(const onnx::NodeProto& node, const char* name) {
  if (!find_attr(node, name)) {
    fail(ErrorKind::unsupported, "attribute '{}' is missing and the experimental schema gives it no default", name);
  }
  return attr_float(node, name, 0.0f);
}

template <typename F>
Tensors map_floats(const OpContext& ctx, F&& f) {
  const Tensor& x = ctx.required(0, "X");
  require_float_type(x, "X");
  std::vector<double> v = x.to_f64();
  for (double& e : v) e = f(e);
  return one_tensor(Tensor::from_f64(x.dtype, x.dims, v));
}

}  // namespace

Tensors op_affine(const OpContext& ctx) {
  const double alpha = attr_float(*ctx.node, "alpha", 1.0f), beta = attr_float(*ctx.node, "beta", 0.0f);
  return map_floats(ctx, [&](double x) { return alpha * x + beta; });
}

Tensors op_scaled_tanh(const OpContext& ctx) {
  const double alpha = required_float(*ctx.node, "alpha"), beta = required_float(*ctx.node, "beta");
  return map_floats(ctx, [&](double x) { return alpha * std::tanh(beta * x); });
}

Tensors op_parametric_softplus(const OpContext& ctx) {
  const double alpha = required_float(*ctx.node, "alpha"), beta = required_float(*ctx.node, "beta");
  // ln(exp(b) + 1) = b + ln(1 + exp(-b)) for b > 0: no overflow for large b.
  return map_floats(ctx, [&](double x) {
    const double b = beta * x;
    return alpha * (b > 0 ? b + std::log1p(std::exp(-b)) : std::log1p(std::exp(b)));
  });
}

Tensors op_scale(const OpContext& ctx) {
  const double scale = attr_float(*ctx.node, "scale", 1.0f);
  return map_floats(ctx, [&](double x) { return scale * x; });
}

namespace {

const Tensor& image_input(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  require_float_type(x, "input");
  if (x.dims.size() != 4) fail(ErrorKind::input, "input must be [N,C,H,W], not {}", shape_str(x.dims));
  return x;
}

// No bias attribute reads as a bias of 0 for every channel.
}  // namespace

Tensors op_image_scaler(const OpContext& ctx) {
  const Tensor& x = image_input(ctx);
  const double scale = attr_float(*ctx.node, "scale", 1.0f);
  const int64_t channels = x.dims[1], plane = x.dims[2] * x.dims[3];
  std::vector<float> bias = attr_floats(*ctx.node, "bias").value_or(std::vector<float>(channels, 0.0f));
  if (static_cast<int64_t>(bias.size()) != channels) {
    fail(ErrorKind::input, "attribute 'bias' has {} values for {} channels", bias.size(), channels);
  }
  std::vector<double> v = x.to_f64();
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = scale * v[i] + static_cast<double>(bias[(static_cast<int64_t>(i) / plane) % channels]);
  }
  return one_tensor(Tensor::from_f64(x.dtype, x.dims, v));
}

Tensors op_crop(const OpContext& ctx) {
  const Tensor& x = image_input(ctx);
  const auto border = attr_ints(*ctx.node, "border");
  if (!border || border->size() != 4) fail(ErrorKind::input, "attribute 'border' needs 4 values (left, top, right, bottom)");
  const int64_t left = (*border)[0], top = (*border)[1], right = (*border)[2], bottom = (*border)[3];
  const int64_t h = x.dims[2], w = x.dims[3];
  int64_t row_end = h - bottom, col_end = w - right;
  if (const auto scale = attr_ints(*ctx.node, "scale")) {
    if (scale->size() != 2) fail(ErrorKind::input, "attribute 'scale' needs 2 values (height, width)");
    if ((*scale)[0] < 0 || (*scale)[1] < 0) fail(ErrorKind::input, "attribute 'scale' has a negative size");
    row_end = top + (*scale)[0];
    col_end = left + (*scale)[1];
  }
  if (left < 0 || top < 0 || right < 0 || bottom < 0 || row_end < top || col_end < left || row_end > h ||
      col_end > w) {
    fail(ErrorKind::input, "the crop rows [{}, {}) and columns [{}, {}) do not fit an input of {}", top, row_end,
         left, col_end, shape_str(x.dims));
  }
  Tensor out(x.dtype, {x.dims[0], x.dims[1], row_end - top, col_end - left});
  const size_t es = dtype_size(x.dtype);
  const size_t row_bytes = static_cast<size_t>(col_end - left) * es;
  uint8_t* dst = out.bytes.data();
  for (int64_t p = 0; p < x.dims[0] * x.dims[1]; ++p) {
    for (int64_t r = top; r < row_end; ++r, dst += row_bytes) {
      if (row_bytes) std::memcpy(dst, x.bytes.data() + static_cast<size_t>((p * h + r) * w + left) * es, row_bytes);
    }
  }
  return one_tensor(std::move(out));
}

Tensors op_dynamic_slice(const OpContext& ctx) {
  if (ctx.input_count() > 4) fail(ErrorKind::input, "DynamicSlice takes at most 4 inputs (no steps)");
  ctx.required(1, "starts");
  ctx.required(2, "ends");
  // Slice-10 with starts, ends and axes as inputs is this op's meaning.
  OpContext as_slice = ctx;
  as_slice.version = 10;
  return op_slice(as_slice);
}

namespace {

std::vector<int64_t> with_extra_shape(std::vector<int64_t> dims, const onnx::NodeProto& node) {
  for (int64_t d : attr_ints(node, "extra_shape").value_or(std::vector<int64_t>{})) {
    if (d < 0) fail(ErrorKind::input, "attribute 'extra_shape' has a negative dim {}", d);
    dims.push_back(d);
  }
  return dims;
}

// The output shape of the fill ops from the `shape` attribute (no input), or
// from the input's dims or values (input_as_shape) plus extra_shape.
std::vector<int64_t> fill_shape(const OpContext& ctx) {
  const onnx::NodeProto& node = *ctx.node;
  const Tensor* in = ctx.input(0);
  const bool as_shape = attr_int(node, "input_as_shape", 0) != 0;
  if (!in) {
    if (find_attr(node, "extra_shape") || as_shape) {
      fail(ErrorKind::input, "'extra_shape' and 'input_as_shape' need an input");
    }
    // Without a `shape` attribute Caffe2's FillerOp makes a scalar.
    std::vector<int64_t> dims = attr_ints(node, "shape").value_or(std::vector<int64_t>{});
    for (int64_t d : dims) {
      if (d < 0) fail(ErrorKind::input, "attribute 'shape' has a negative dim {}", d);
    }
    return dims;
  }
  if (find_attr(node, "shape")) fail(ErrorKind::input, "attribute 'shape' cannot be set with an input");
  if (!as_shape) return with_extra_shape(in->dims, node);
  if (in->dims.size() != 1) fail(ErrorKind::input, "with input_as_shape the input must be 1-D, not {}", shape_str(in->dims));
  std::vector<int64_t> dims;
  for (double d : in->to_f64()) {
    if (!(d >= 0) || d != std::floor(d) || d > 9.0e18) fail(ErrorKind::input, "the input holds {}, not a dim", d);
    dims.push_back(static_cast<int64_t>(d));
  }
  return with_extra_shape(dims, node);
}

}  // namespace

Tensors op_constant_fill(const OpContext& ctx) {
  const int64_t dtype = attr_int(*ctx.node, "dtype", static_cast<int64_t>(DType::float32));
  const auto t = static_cast<DType>(dtype);
  if (t != DType::float32 && t != DType::int32 && t != DType::int64 && t != DType::boolean) {
    fail(ErrorKind::input, "attribute 'dtype' is {}; the schema allows float, int32, int64 and bool", dtype);
  }
  if (const Tensor* in = ctx.input(0)) {
    if (in->dtype != DType::float32 && in->dtype != DType::int32 && in->dtype != DType::int64 &&
        in->dtype != DType::boolean) {
      fail(ErrorKind::input, "input is {}; the schema allows float, int32, int64 and bool", dtype_name(in->dtype));
    }
  }
  const double value = attr_float(*ctx.node, "value", 0.0f);
  // The value attribute is a float: an integer or bool output takes it only
  // when it is exactly representable (0 or 1 for bool).
  if (t != DType::float32 && (value != std::floor(value) || (t == DType::boolean && value != 0 && value != 1))) {
    fail(ErrorKind::unsupported, "value {} is not exactly a {}", value, dtype_name(t));
  }
  const std::vector<int64_t> dims = fill_shape(ctx);
  const int64_t n = checked_buffer_numel(dims, sizeof(double), "ConstantFill output");
  return one_tensor(Tensor::from_f64(t, dims, std::vector<double>(static_cast<size_t>(n), value)));
}

Tensors op_given_tensor_fill(const OpContext& ctx) {
  DType t = DType::float32;  // no input to bind T: Caffe2's float fill
  if (const Tensor* in = ctx.input(0)) {
    require_float_type(*in, "shape");
    t = in->dtype;
    if (attr_int(*ctx.node, "input_as_shape", 0) != 0) {
      fail(ErrorKind::unsupported, "input_as_shape: the schema types the shape input as float, Caffe2 read it as int64");
    }
  }
  const std::vector<int64_t> dims = fill_shape(ctx);
  const std::vector<float> values = attr_floats(*ctx.node, "values").value_or(std::vector<float>{});
  if (static_cast<int64_t>(values.size()) != checked_numel(dims)) {
    fail(ErrorKind::input, "attribute 'values' has {} values for shape {}", values.size(), shape_str(dims));
  }
  return one_tensor(Tensor::from_f64(t, dims, std::vector<double>(values.begin(), values.end())));
}

}  // namespace bnorm::eval
