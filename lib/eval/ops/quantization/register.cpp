// The versions of quantization and the integer ops bnorm implements: one row per behaviour, each a closed range
// of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/quantization/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_quantization_ops(OpRegistry& r) {
  r.add("ConvInteger", 10, 10, op_conv_integer);
  r.add("DequantizeLinear", 10, 25, op_dequantize_linear);
  r.add("DynamicQuantizeLinear", 11, 11, op_dynamic_quantize_linear);
  r.add("MatMulInteger", 10, 10, op_matmul_integer);
  r.add("QLinearConv", 10, 10, op_qlinear_conv);
  r.add("QLinearMatMul", 10, 21, op_qlinear_matmul);
  r.add("QuantizeLinear", 10, 25, op_quantize_linear);
}

}  // namespace bnorm::eval
