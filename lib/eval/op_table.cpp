// The ops bnorm's evaluator implements: one row per op_type (default
// domain), sorted, each naming the function that runs it at every version.
#include <cstring>

#include "core/error.h"
#include "eval/ops.h"

namespace bnorm::eval {

namespace {

struct Row {
  const char* op;
  OpFn fn;
};

constexpr Row kOps[] = {
    {"Abs", op_abs},
    {"Add", op_add},
    {"And", op_and},
    {"AveragePool", op_average_pool},
    {"BatchNormalization", op_batch_norm},
    {"Cast", op_cast},
    {"CastLike", op_cast_like},
    {"Celu", op_activation},
    {"Clip", op_activation},
    {"Concat", op_concat},
    {"Constant", op_constant},
    {"ConstantOfShape", op_constant_of_shape},
    {"Conv", op_conv},
    {"ConvTranspose", op_conv_transpose},
    {"Div", op_div},
    {"Dropout", op_dropout},
    {"Elu", op_activation},
    {"Equal", op_equal},
    {"Exp", op_exp},
    {"Expand", op_expand},
    {"Flatten", op_flatten},
    {"Gather", op_gather},
    {"Gemm", op_gemm},
    {"GlobalAveragePool", op_global_average_pool},
    {"Greater", op_greater},
    {"GreaterOrEqual", op_greater_or_equal},
    {"HardSigmoid", op_activation},
    {"HardSwish", op_activation},
    {"Identity", op_identity},
    {"If", op_if},
    {"InstanceNormalization", op_instance_norm},
    {"LeakyRelu", op_activation},
    {"Less", op_less},
    {"LessOrEqual", op_less_or_equal},
    {"Log", op_log},
    {"LogSoftmax", op_log_softmax},
    {"MatMul", op_matmul},
    {"Max", op_max},
    {"MaxPool", op_max_pool},
    {"Mean", op_mean},
    {"Min", op_min},
    {"Mul", op_mul},
    {"Neg", op_neg},
    {"Not", op_not},
    {"Or", op_or},
    {"PRelu", op_prelu},
    {"Pad", op_pad},
    {"Pow", op_pow},
    {"Reciprocal", op_reciprocal},
    {"ReduceL1", op_reduce_l1},
    {"ReduceL2", op_reduce_l2},
    {"ReduceLogSum", op_reduce_log_sum},
    {"ReduceLogSumExp", op_reduce_log_sum_exp},
    {"ReduceMax", op_reduce_max},
    {"ReduceMean", op_reduce_mean},
    {"ReduceMin", op_reduce_min},
    {"ReduceProd", op_reduce_prod},
    {"ReduceSum", op_reduce_sum},
    {"ReduceSumSquare", op_reduce_sum_square},
    {"Relu", op_activation},
    {"Reshape", op_reshape},
    {"Resize", op_resize},
    {"Selu", op_activation},
    {"Shape", op_shape},
    {"Sigmoid", op_activation},
    {"Size", op_size},
    {"Slice", op_slice},
    {"Softmax", op_softmax},
    {"Softplus", op_activation},
    {"Softsign", op_activation},
    {"Split", op_split},
    {"Sqrt", op_sqrt},
    {"Squeeze", op_squeeze},
    {"Sub", op_sub},
    {"Sum", op_sum},
    {"Tanh", op_activation},
    {"ThresholdedRelu", op_activation},
    {"Tile", op_tile},
    {"Transpose", op_transpose},
    {"Unsqueeze", op_unsqueeze},
    {"Upsample", op_upsample},
    {"Where", op_where},
    {"Xor", op_xor},
};

}  // namespace

OpFn find_op(const std::string& op_type) {
  for (const Row& r : kOps) {
    if (op_type == r.op) return r.fn;
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
