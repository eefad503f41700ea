// The op implementations and the versions each covers. The ops of the
// first families register here; newer families register from their own
// files (add_*_ops in ops.h). Every row's bounds are since-versions of its op
// (model/op_versions.h); a version between them that changed only types is
// covered because the function reads types from its inputs, and one that
// changed meaning is handled inside the function by ctx.version. The ranges
// were audited against ONNX 1.23's Changelog (docs/semantics.md, "Op
// versions"); Resize-18/19, Celu-28 and InstanceNormalization-22 are left
// out until their changes are implemented.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/ops.h"
#include "model/op_versions.h"

namespace bnorm::eval {

namespace {

void add_core_ops(OpRegistry& r) {
  r.add("Abs", 1, 13, op_abs);
  r.add("Add", 1, 14, op_add);
  r.add("And", 1, 7, op_and);
  r.add("AveragePool", 1, 22, op_average_pool);
  r.add("BatchNormalization", 1, 15, op_batch_norm);
  r.add("Cast", 1, 25, op_cast);
  r.add("CastLike", 15, 25, op_cast_like);
  r.add("Celu", 12, 12, op_activation);
  r.add("Clip", 1, 13, op_activation);
  r.add("Concat", 1, 13, op_concat);
  r.add("Constant", 1, 25, op_constant);
  r.add("ConstantOfShape", 9, 25, op_constant_of_shape);
  r.add("Conv", 1, 22, op_conv);
  r.add("ConvTranspose", 1, 22, op_conv_transpose);
  r.add("Div", 1, 14, op_div);
  r.add("Dropout", 1, 22, op_dropout);
  r.add("Elu", 1, 22, op_activation);
  r.add("Equal", 1, 19, op_equal);
  r.add("Exp", 1, 13, op_exp);
  r.add("Expand", 8, 13, op_expand);
  r.add("Flatten", 1, 25, op_flatten);
  r.add("Gather", 1, 13, op_gather);
  r.add("Gemm", 1, 13, op_gemm);
  r.add("GlobalAveragePool", 1, 22, op_global_average_pool);
  r.add("Greater", 1, 13, op_greater);
  r.add("GreaterOrEqual", 12, 16, op_greater_or_equal);
  r.add("HardSigmoid", 1, 22, op_activation);
  r.add("HardSwish", 14, 22, op_activation);
  r.add("Identity", 1, 25, op_identity);
  r.add("If", 1, 25, op_if);
  r.add("InstanceNormalization", 1, 6, op_instance_norm);
  r.add("LeakyRelu", 1, 16, op_activation);
  r.add("Less", 1, 13, op_less);
  r.add("LessOrEqual", 12, 16, op_less_or_equal);
  r.add("Log", 1, 13, op_log);
  r.add("LogSoftmax", 1, 13, op_log_softmax);
  r.add("MatMul", 1, 13, op_matmul);
  r.add("Max", 1, 13, op_max);
  r.add("MaxPool", 1, 22, op_max_pool);
  r.add("Mean", 1, 13, op_mean);
  r.add("Min", 1, 13, op_min);
  r.add("Mul", 1, 14, op_mul);
  r.add("Neg", 1, 13, op_neg);
  r.add("Not", 1, 1, op_not);
  r.add("Or", 1, 7, op_or);
  r.add("PRelu", 1, 16, op_prelu);
  r.add("Pad", 1, 25, op_pad);
  r.add("Pow", 1, 15, op_pow);
  r.add("Reciprocal", 1, 13, op_reciprocal);
  r.add("ReduceL1", 1, 18, op_reduce_l1);
  r.add("ReduceL2", 1, 18, op_reduce_l2);
  r.add("ReduceLogSum", 1, 18, op_reduce_log_sum);
  r.add("ReduceLogSumExp", 1, 18, op_reduce_log_sum_exp);
  r.add("ReduceMax", 1, 20, op_reduce_max);
  r.add("ReduceMean", 1, 18, op_reduce_mean);
  r.add("ReduceMin", 1, 20, op_reduce_min);
  r.add("ReduceProd", 1, 18, op_reduce_prod);
  r.add("ReduceSum", 1, 13, op_reduce_sum);
  r.add("ReduceSumSquare", 1, 18, op_reduce_sum_square);
  r.add("Relu", 1, 14, op_activation);
  r.add("Reshape", 1, 25, op_reshape);
  r.add("Resize", 10, 13, op_resize);
  r.add("Selu", 1, 22, op_activation);
  r.add("Shape", 1, 25, op_shape);
  r.add("Sigmoid", 1, 13, op_activation);
  r.add("Size", 1, 25, op_size);
  r.add("Slice", 1, 13, op_slice);
  r.add("Softmax", 1, 13, op_softmax);
  r.add("Softplus", 1, 22, op_activation);
  r.add("Softsign", 1, 22, op_activation);
  r.add("Split", 1, 18, op_split);
  r.add("Sqrt", 1, 13, op_sqrt);
  r.add("Squeeze", 1, 25, op_squeeze);
  r.add("Sub", 1, 14, op_sub);
  r.add("Sum", 1, 13, op_sum);
  r.add("Tanh", 1, 13, op_activation);
  r.add("ThresholdedRelu", 1, 22, op_activation);
  r.add("Tile", 1, 13, op_tile);
  r.add("Transpose", 1, 25, op_transpose);
  r.add("Unsqueeze", 1, 25, op_unsqueeze);
  r.add("Upsample", 1, 9, op_upsample);
  r.add("Where", 9, 16, op_where);
  r.add("Xor", 1, 7, op_xor);
}

std::vector<OpImpl> build() {
  OpRegistry r;
  add_core_ops(r);
  add_rnn_ops(r);
  add_unary_ops(r);
  add_indexing_ops(r);
  add_resample_ops(r);
  add_quant_ops(r);
  add_misc_ops(r);
  add_attention_ops(r);
  add_control_ops(r);
  add_norm_family_ops(r);
  add_tfidf_ops(r);
  std::vector<OpImpl> rows = std::move(r.rows());
  std::sort(rows.begin(), rows.end(),
            [](const OpImpl& a, const OpImpl& b) { return a.op != b.op ? a.op < b.op : a.first < b.first; });
  return rows;
}

}  // namespace

void OpRegistry::add(const char* op, int first, int last, OpFn fn) { rows_.push_back({op, first, last, fn}); }

const std::vector<OpImpl>& op_impls() {
  static const std::vector<OpImpl> rows = build();
  return rows;
}

OpFn find_op(const std::string& op_type, int version) {
  for (const OpImpl& r : op_impls()) {
    if (r.op == op_type && version >= r.first && version <= r.last) return r.fn;
  }
  return nullptr;
}

bool implements_op(const std::string& op_type) {
  for (const OpImpl& r : op_impls()) {
    if (r.op == op_type) return true;
  }
  return false;
}

std::string implemented_versions(const std::string& op_type) {
  const OpHistory* h = op_history(op_type);
  if (!h) return {};
  std::vector<std::string> have;
  std::vector<std::string> all;
  for (int v : h->versions) {
    all.push_back(std::to_string(v));
    if (find_op(op_type, v)) have.push_back(all.back());
  }
  return fmt::format("implemented: {}; the op's versions: {}",
                     have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", ")), fmt::join(all, ", "));
}

const char* refusal_reason(const std::string& op_type) {
  struct Refusal {
    const char* op;
    const char* why;
  };
  static constexpr const char* kRandom = "its outputs are random, so there is nothing to check them against";
  static constexpr const char* kStrings = "bnorm eval does not hold string tensors";
  static constexpr Refusal kRefused[] = {
      {"Bernoulli", kRandom},
      {"Multinomial", kRandom},
      {"RandomNormal", kRandom},
      {"RandomNormalLike", kRandom},
      {"RandomUniform", kRandom},
      {"RandomUniformLike", kRandom},
      {"RegexFullMatch", kStrings},
      {"StringConcat", kStrings},
      {"StringNormalizer", kStrings},
      {"StringSplit", kStrings},
      {"ImageDecoder", "decoding images is left out of bnorm eval"},
      {"ATen", "it runs a PyTorch operator, which ONNX does not define"},
  };
  for (const Refusal& r : kRefused) {
    if (op_type == r.op) return r.why;
  }
  return nullptr;
}

const Tensor& OpContext::required(size_t i, const char* what) const {
  const Tensor* t = input(i);
  if (!t) fail(ErrorKind::input, "missing input '{}'", what);
  return *t;
}

bool OpContext::wants(int i) const { return i < node->output_size() && !node->output(i).empty(); }

}  // namespace bnorm::eval
