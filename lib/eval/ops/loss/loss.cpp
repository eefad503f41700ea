// The loss ops, computed in float64 and rounded once to the input's type.
//
//   NegativeLogLikelihoodLoss-12, -13, -22 (22 adds bfloat16)
//     input (N, C, d1..dk) of log-probabilities, target (N, d1..dk) of class
//     indices, optional weight (C):
//       loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
//       (weight 1 without it; 0 where target == ignore_index)
//     reduction none: loss; sum: sum(loss); mean (default):
//       sum(loss) / sum(weight[target]) over the samples not ignored
//       (so without weight, over their count; 0 / 0 is NaN).
//   SoftmaxCrossEntropyLoss-12, -13 (13 adds bfloat16)
//     scores (N, C, d1..dk): log_prob = log(softmax(scores)) along C, then
//     the loss above on log_prob; output 1 (optional) is log_prob.
// A target outside [0, C) that is not ignore_index is Error(input).
#include <cmath>
#include <limits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/loss/ops.h"

namespace bnorm::eval {

namespace {

enum class Reduction { none, sum, mean };

void require_type(const Tensor& t, const char* what, bool allow_bf16) {
  const bool ok = t.dtype == DType::float16 || t.dtype == DType::float32 || t.dtype == DType::float64 ||
                  (allow_bf16 && t.dtype == DType::bfloat16);
  if (!ok) fail(ErrorKind::input, "input '{}' of type {} is not allowed at this version", what, dtype_name(t.dtype));
}

Reduction reduction(const onnx::NodeProto& node) {
  const std::string r = attr_string(node, "reduction", "mean");
  if (r == "none") return Reduction::none;
  if (r == "sum") return Reduction::sum;
  if (r == "mean") return Reduction::mean;
  fail(ErrorKind::input, "reduction '{}' is not none, sum or mean", r);
}

// The loss of log-probabilities `logp` laid out as (N, C, inner) against
// `target`, reduced as the node says.
Tensor nll(const OpContext& ctx, const std::vector<double>& logp, const std::vector<int64_t>& in_dims,
           const char* input_name, DType t, bool allow_bf16) {
  const Tensor& target = ctx.required(1, "target");
  if (target.dtype != DType::int32 && target.dtype != DType::int64) {
    fail(ErrorKind::input, "target must be int32 or int64, not {}", dtype_name(target.dtype));
  }
  std::vector<int64_t> loss_dims = in_dims;
  loss_dims.erase(loss_dims.begin() + 1);
  if (target.dims != loss_dims) {
    fail(ErrorKind::input, "target {} does not match {} {}", shape_str(target.dims), input_name, shape_str(in_dims));
  }
  const int64_t classes = in_dims[1], batch = in_dims[0], inner = product(in_dims, 2);
  std::vector<double> weight(static_cast<size_t>(classes), 1.0);
  if (const Tensor* w = ctx.input(2)) {
    require_type(*w, "weight", allow_bf16);
    if (w->dims != std::vector<int64_t>{classes}) {
      fail(ErrorKind::input, "weight {} must have the {} classes", shape_str(w->dims), classes);
    }
    weight = w->to_f64();
  }
  const onnx::AttributeProto* ii = find_attr(*ctx.node, "ignore_index");
  const int64_t ignore = attr_int(*ctx.node, "ignore_index", 0);
  const std::vector<int64_t> labels = read_ints(target, "target");
  std::vector<double> loss(labels.size());
  double total = 0, weights = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t d = 0; d < inner; ++d) {
      const size_t s = static_cast<size_t>(n * inner + d);
      const int64_t c = labels[s];
      if (ii && c == ignore) continue;
      if (c < 0 || c >= classes) fail(ErrorKind::input, "target {} is outside [0, {})", c, classes);
      loss[s] = -logp[static_cast<size_t>((n * classes + c) * inner + d)] * weight[c];
      total += loss[s];
      weights += weight[c];
    }
  }
  switch (reduction(*ctx.node)) {
    case Reduction::none: return Tensor::from_f64(t, loss_dims, loss);
    case Reduction::sum: return Tensor::from_f64(t, {}, {total});
    case Reduction::mean: break;
  }
  return Tensor::from_f64(t, {}, {total / weights});
}

const Tensor& class_input(const OpContext& ctx, const char* what, bool allow_bf16) {
  const Tensor& x = ctx.required(0, what);
  require_type(x, what, allow_bf16);
  if (x.dims.size() < 2) fail(ErrorKind::input, "input '{}' must be (N, C, ...), not {}", what, shape_str(x.dims));
  return x;
}

}  // namespace

Tensors op_nll_loss(const OpContext& ctx) {
  const bool bf16 = ctx.version >= 22;
  const Tensor& x = class_input(ctx, "input", bf16);
  return one_tensor(nll(ctx, x.to_f64(), x.dims, "input", x.dtype, bf16));
}

Tensors op_softmax_cross_entropy(const OpContext& ctx) {
  const bool bf16 = ctx.version >= 13;
  const Tensor& x = class_input(ctx, "scores", bf16);
  const int64_t classes = x.dims[1], outer = x.dims[0], inner = product(x.dims, 2);
  std::vector<double> v = x.to_f64();
  // log softmax along C: x - max - log(sum(exp(x - max))).
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t d = 0; d < inner; ++d) {
      auto at = [&](int64_t c) -> double& { return v[static_cast<size_t>((o * classes + c) * inner + d)]; };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c) m = std::max(m, at(c));
      double s = 0;
      for (int64_t c = 0; c < classes; ++c) s += std::exp(at(c) - m);
      const double shift = m + std::log(s);
      for (int64_t c = 0; c < classes; ++c) at(c) -= shift;
    }
  }
  Tensors out(2);
  out[0] = nll(ctx, v, x.dims, "scores", x.dtype, bf16);
  if (ctx.wants(1)) out[1] = Tensor::from_f64(x.dtype, x.dims, v);
  return out;
}

}  // namespace bnorm::eval
