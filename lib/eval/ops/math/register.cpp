// The versions of matrix products, Einsum, Det and Hardmax bnorm implements: one row per behaviour, each a
// closed range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/math/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_math_ops(OpRegistry& r) {
  r.add("Det", 11, 22, op_det);
  r.add("Gemm", 1, 13, op_gemm);
  r.add("Hardmax", 1, 13, op_hardmax);
  r.add("MatMul", 1, 13, op_matmul);
  r.add("Einsum", 12, 12, op_einsum);
}

}  // namespace bnorm::eval
