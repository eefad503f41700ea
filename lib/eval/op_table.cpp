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
    {"Add", op_add},
    {"AveragePool", op_average_pool},
    {"BatchNormalization", op_batch_norm},
    {"Cast", op_cast},
    {"Celu", op_activation},
    {"Clip", op_activation},
    {"Constant", op_constant},
    {"Conv", op_conv},
    {"ConvTranspose", op_conv_transpose},
    {"Div", op_div},
    {"Dropout", op_dropout},
    {"Elu", op_activation},
    {"Flatten", op_flatten},
    {"Gemm", op_gemm},
    {"GlobalAveragePool", op_global_average_pool},
    {"HardSigmoid", op_activation},
    {"HardSwish", op_activation},
    {"Identity", op_identity},
    {"If", op_if},
    {"InstanceNormalization", op_instance_norm},
    {"LeakyRelu", op_activation},
    {"MatMul", op_matmul},
    {"MaxPool", op_max_pool},
    {"Mul", op_mul},
    {"Reciprocal", op_reciprocal},
    {"ReduceMean", op_reduce_mean},
    {"Relu", op_activation},
    {"Reshape", op_reshape},
    {"Selu", op_activation},
    {"Sigmoid", op_activation},
    {"Softmax", op_softmax},
    {"Softplus", op_activation},
    {"Softsign", op_activation},
    {"Sqrt", op_sqrt},
    {"Squeeze", op_squeeze},
    {"Sub", op_sub},
    {"Tanh", op_activation},
    {"ThresholdedRelu", op_activation},
    {"Transpose", op_transpose},
    {"Unsqueeze", op_unsqueeze},
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
