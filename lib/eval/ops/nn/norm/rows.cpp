// LayerNormalization-17 and RMSNormalization-23: X seen as [rows, len], the
// rows made by the axes before `axis`, each row normalized by its own
// statistics (kernels/layer_norm.h):
//
//   LayerNormalization  Y = (X - mean) / sqrt(var + epsilon) * Scale + B
//                       inputs X, Scale, B (optional) of one type T (f32,
//                       f64, f16, bf16); outputs Y (T), Mean and InvStdDev
//                       (type U = stash_type: float (1) or bfloat16 (16)),
//                       of shape X's dims before `axis`, then ones.
//   RMSNormalization    Y = X / sqrt(mean(X^2) + epsilon) * scale
//                       X of type T, scale and Y of type V (any of the four).
//
// Scale and B broadcast unidirectionally to X: parameters that vary only
// along the normalized axes are expanded once to a row, others to all of X.
// Statistics and the element formula in float64, Y rounded once;
// Mean/InvStdDev are the float64 values rounded once to U. stash_type never
// lowers that precision (family.cpp); RMSNormalization accepts
// any floating stash type bnorm holds (1, 10, 11, 16).
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/nn/norm/family.h"
#include "eval/ops/nn/norm/ops.h"
#include "kernels/layer_norm.h"

namespace bnorm::eval {

namespace {

struct RowShape {
  size_t axis = 0;
  size_t rows = 1;
  size_t len = 1;
};

RowShape row_shape(const Tensor& x, const onnx::NodeProto& node) {
  const auto rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0) fail(ErrorKind::input, "input 'X' must have rank 1 or more, is a scalar");
  const auto axis = static_cast<size_t>(normalize_axis(attr_int(node, "axis", -1), rank));
  return {axis, static_cast<size_t>(product(x.dims, 0, axis)), static_cast<size_t>(product(x.dims, axis))};
}

// A parameter as one row of len values (stride 0) when it varies only along
// the normalized axes, else expanded to every element of X (stride len).
struct RowParam {
  std::vector<double> values;
  size_t stride = 0;
};

RowParam row_param(const Tensor& p, const char* what, const Tensor& x, const RowShape& s) {
  if (p.dims.size() > x.dims.size()) {
    fail(ErrorKind::input, "input '{}' of shape {} has a higher rank than X {}", what, shape_str(p.dims),
         shape_str(x.dims));
  }
  const std::vector<double> v = p.to_f64();
  const size_t normalized_rank = x.dims.size() - s.axis;
  const size_t leading = p.dims.size() > normalized_rank ? p.dims.size() - normalized_rank : 0;
  bool per_row = false;
  for (size_t k = 0; k < leading; ++k) per_row = per_row || p.dims[k] != 1;
  if (per_row) return {expand_to(v, p.dims, what, x.dims), s.len};
  const std::vector<int64_t> trailing(p.dims.begin() + static_cast<std::ptrdiff_t>(leading), p.dims.end());
  const std::vector<int64_t> normalized(x.dims.begin() + static_cast<std::ptrdiff_t>(s.axis), x.dims.end());
  return {expand_to(v, trailing, what, normalized), 0};
}

template <class X, class Y>
void run_rows(const Tensor& x, Tensor& y, const RowShape& s, const kernels::RowNormParams& p, double* mean,
              double* inv_std) {
  kernels::norm_rows(x.data<X>(), y.data<Y>(), s.rows, s.len, p, mean, inv_std);
}

}  // namespace

Tensors op_layer_norm(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& scale = ctx.required(1, "Scale");
  const Tensor* bias = ctx.input(2);
  require_same_type(scale, "Scale", x);
  if (bias != nullptr) require_same_type(*bias, "B", x);
  const DType stash = read_stash_type(*ctx.node, {DType::float32, DType::bfloat16});
  const RowShape s = row_shape(x, *ctx.node);
  const RowParam sp = row_param(scale, "Scale", x, s);
  RowParam bp;
  if (bias != nullptr) bp = row_param(*bias, "B", x, s);
  const kernels::RowNormParams p{sp.values.data(), sp.stride, bias != nullptr ? bp.values.data() : nullptr,
                                 bp.stride, static_cast<double>(attr_float(*ctx.node, "epsilon", 1e-5f)), false};
  Tensors out(static_cast<size_t>(std::max(1, ctx.output_count())));
  out[0] = Tensor(x.dtype, x.dims);
  std::vector<double> mean(s.rows), inv_std(s.rows);
  with_storage(x.dtype, "input 'X'", true, [&](auto tag) {
    using T = decltype(tag);
    run_rows<T, T>(x, out[0], s, p, mean.data(), inv_std.data());
  });
  std::vector<int64_t> stats_dims = x.dims;
  for (size_t d = s.axis; d < stats_dims.size(); ++d) stats_dims[d] = 1;
  if (ctx.wants(1)) out[1] = Tensor::from_f64(stash, stats_dims, mean);
  if (ctx.wants(2)) out[2] = Tensor::from_f64(stash, stats_dims, inv_std);
  return out;
}

Tensors op_rms_norm(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& scale = ctx.required(1, "scale");
  read_stash_type(*ctx.node, {DType::float32, DType::float16, DType::float64, DType::bfloat16});
  const RowShape s = row_shape(x, *ctx.node);
  const RowParam sp = row_param(scale, "scale", x, s);
  const kernels::RowNormParams p{sp.values.data(), sp.stride, nullptr, 0,
                                 static_cast<double>(attr_float(*ctx.node, "epsilon", 1e-5f)), true};
  Tensors out(1);
  out[0] = Tensor(scale.dtype, x.dims);  // Y has scale's type V
  with_storage(x.dtype, "input 'X'", true, [&](auto xtag) {
    with_storage(scale.dtype, "input 'scale'", true, [&](auto ytag) {
      run_rows<decltype(xtag), decltype(ytag)>(x, out[0], s, p, nullptr, nullptr);
    });
  });
  return out;
}

}  // namespace bnorm::eval
