// BatchNormalization (versions 1, 6, 7, 9, 14, 15) and InstanceNormalization
// (1, 6). Attributes, defaults and the mode come from read_norm_node(); the
// arithmetic from norm_compute.h (to_affine, one multiply-add per element).
//
// Layout: X is [N, C, D1..Dn] seen as [N, C, S]; a rank-1 X is [N] with
// C = 1. Legacy non-spatial BN (spatial = 0, versions < 9) has parameters
// of shape [C, D1..Dn] (a flat [C*D1*..*Dn] is accepted too) and is
// computed as [N, C*D1*..*Dn, 1].
//
// Parameters are converted to float for float/float16/bfloat16 data and to
// double for double data, whatever their own type (version 15's T1 and T2
// vary independently of T).
//
// Training (BN 1/6 with is_test = 0 or absent, 7..13 with more than one
// output, 14/15 with training_mode = 1): statistics of the batch over every
// axis but 1, population variance. Y uses the batch statistics; the running
// statistics are input * momentum + batch * (1 - momentum), computed in
// double and rounded once to the type of input_mean / input_var. The legacy
// five-output form (1 .. 13) also returns saved_mean = batch mean and
// saved_var = batch variance, as the ONNX spec says. (onnxruntime's CPU
// kernel writes the inverse standard deviation 1/sqrt(var + eps) to
// saved_var instead; bnorm follows the spec.)
#include <algorithm>
#include <vector>

#include "eval/ops/nn/norm/norm_compute.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "eval/ops/nn/norm/ops.h"
#include "model/norm_op.h"

namespace bnorm::eval {

namespace {

struct Layout {
  kernels::NcsShape shape;           // as the kernels see X
  std::vector<int64_t> param_dims;   // the expected parameter shape
};

Layout batch_norm_layout(const std::vector<int64_t>& xd, bool spatial) {
  if (xd.empty()) fail(ErrorKind::input, "input 'X' must have rank 1 or more, is a scalar");
  const auto n = static_cast<size_t>(xd[0]);
  const auto c = static_cast<size_t>(xd.size() > 1 ? xd[1] : 1);
  const auto s = static_cast<size_t>(product(xd, 2));
  if (spatial) return {{n, c, s}, {static_cast<int64_t>(c)}};
  std::vector<int64_t> per_item(xd.begin() + 1, xd.end());
  if (per_item.empty()) per_item = {1};
  return {{n, c * s, 1}, per_item};
}

// Checks a parameter's shape: `expected`, or any shape with the same count
// of at most one non-1 axis (a scalar for C = 1, a flat legacy parameter).
void check_param(const Tensor& p, const char* what, const std::vector<int64_t>& expected) {
  if (!is_floating(p.dtype)) {
    fail(ErrorKind::input, "input '{}' has type {}, expected a floating type", what, dtype_name(p.dtype));
  }
  if (p.dims == expected) return;
  int non_one = 0;
  for (int64_t d : p.dims) non_one += d != 1;
  if (p.numel() == product(expected) && non_one <= 1) return;
  fail(ErrorKind::input, "input '{}' has shape {}, expected {}", what, shape_str(p.dims), shape_str(expected));
}

// A statistics output: `values` (double) rounded once to the type of `like`.
Tensor stats_tensor(const Tensor& like, const std::vector<double>& values) {
  return Tensor::from_f64(like.dtype, like.dims, values);
}

template <typename P>
Tensors batch_norm(const OpContext& ctx, const NormNode& nn, const Tensor& x, const Layout& lay) {
  const Tensor* in[4] = {&ctx.required(1, "scale"), &ctx.required(2, "B"), &ctx.required(3, "input_mean"),
                         &ctx.required(4, "input_var")};
  const std::vector<P> scale = load_values<P>(*in[0]), bias = load_values<P>(*in[1]);
  // Y is computed even when the node names no output at all.
  Tensors out(static_cast<size_t>(std::max(1, ctx.output_count())));
  const auto eps = static_cast<P>(nn.epsilon);
  if (!nn.training) {
    const std::vector<P> mean = load_values<P>(*in[2]), var = load_values<P>(*in[3]);
    // In place when X dies here: each element is read before it is written.
    const DType t = x.dtype;
    const void* xd = x.bytes.data();
    Tensor* spare = ctx.reusable(0, t, x.dims);
    out[0] = spare ? std::move(*spare) : tensor_for_overwrite(t, x.dims);  // x is not used past this line
    bn_inference<P>(t, xd, out[0].bytes.data(), lay.shape, {scale.data(), bias.data(), mean.data(), var.data(), eps},
                    ctx.fused);
    return out;
  }
  out[0] = Tensor(x.dtype, x.dims);
  std::vector<double> bmean(lay.shape.c), bvar(lay.shape.c);
  bn_training<P>(x.dtype, x.bytes.data(), out[0].bytes.data(), lay.shape, {scale.data(), bias.data(), eps},
                 bmean.data(), bvar.data(), ctx.fused);
  for (int k = 1; k <= 2; ++k) {
    if (!ctx.wants(k)) continue;
    const Tensor& input = *in[k + 1];
    std::vector<double> running = input.to_f64();
    running_update(running.data(), (k == 1 ? bmean : bvar).data(), running.data(), running.size(), nn.momentum);
    out[k] = stats_tensor(input, running);
  }
  if (nn.version < 14) {
    if (ctx.wants(3)) out[3] = stats_tensor(*in[2], bmean);
    if (ctx.wants(4)) out[4] = stats_tensor(*in[3], bvar);
  }
  return out;
}

// bfloat16 exists from BatchNormalization-14 and InstanceNormalization-22
// on; an earlier node holding it is invalid, not read with a later meaning.
void refuse_bfloat16_before(const OpContext& ctx, int since) {
  if (ctx.version >= since) return;
  for (const Tensor* t : ctx.inputs) {
    if (t && t->dtype == DType::bfloat16) {
      fail(ErrorKind::input, "bfloat16 is a type of {} from version {} on; this node is version {}",
           ctx.node->op_type(), since, ctx.version);
    }
  }
}

}  // namespace

Tensors op_batch_norm(const OpContext& ctx) {
  refuse_bfloat16_before(ctx, 14);
  const NormNode nn = read_norm_node(*ctx.node, ctx.opset);
  const Tensor& x = ctx.required(0, "X");
  if (!is_floating(x.dtype)) fail(ErrorKind::input, "input 'X' has type {}, expected a floating type", dtype_name(x.dtype));
  const Layout lay = batch_norm_layout(x.dims, nn.spatial || nn.version >= 9);
  static const char* const names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 4; ++i) check_param(ctx.required(i + 1, names[i]), names[i], lay.param_dims);
  if (nn.version >= 14 && !nn.training && ctx.output_count() > 1) {
    for (int i = 1; i < ctx.output_count(); ++i) {
      if (ctx.wants(i)) fail(ErrorKind::input, "output {} is only defined with training_mode = 1", i);
    }
  }
  return with_float_type(x.dtype, "input 'X'", [&](auto tag) {
    return batch_norm<decltype(tag)>(ctx, nn, x, lay);
  });
}

Tensors op_instance_norm(const OpContext& ctx) {
  refuse_bfloat16_before(ctx, 22);
  const NormNode nn = read_norm_node(*ctx.node, ctx.opset);
  const Tensor& x = ctx.required(0, "input");
  if (!is_floating(x.dtype)) {
    fail(ErrorKind::input, "input 'input' has type {}, expected a floating type", dtype_name(x.dtype));
  }
  if (x.dims.size() < 2) fail(ErrorKind::input, "input 'input' must have rank 2 or more, has shape {}", shape_str(x.dims));
  const kernels::NcsShape shape{static_cast<size_t>(x.dims[0]), static_cast<size_t>(x.dims[1]),
                                static_cast<size_t>(product(x.dims, 2))};
  const std::vector<int64_t> param_dims{x.dims[1]};
  check_param(ctx.required(1, "scale"), "scale", param_dims);
  check_param(ctx.required(2, "B"), "B", param_dims);
  return with_float_type(x.dtype, "input 'input'", [&](auto tag) {
    using P = decltype(tag);
    std::vector<P> scale = load_values<P>(*ctx.input(1)), bias = load_values<P>(*ctx.input(2));
    Tensors out(1);
    out[0] = Tensor(x.dtype, x.dims);
    instance_norm<P>(x.dtype, x.bytes.data(), out[0].bytes.data(), shape,
                     {scale.data(), bias.data(), static_cast<P>(nn.epsilon)}, ctx.fused);
    return out;
  });
}

}  // namespace bnorm::eval
