// The versions of elementwise arithmetic, math, logic, comparison, cast, bitwise and trigonometric ops bnorm
// implements: one row per behaviour, each a closed range of the op's since-versions (run/op.h;
// run/op_table_test.cpp checks every row of every family).
#include "eval/ops/elementwise/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_elementwise_ops(OpRegistry& r) {
  r.add("Abs", 1, 13, op_abs);
  r.add("Acos", 7, 22, op_acos);
  r.add("Acosh", 9, 22, op_acosh);
  r.add("Add", 1, 14, op_add);
  r.add("And", 1, 7, op_and);
  r.add("Asin", 7, 22, op_asin);
  r.add("Asinh", 9, 22, op_asinh);
  r.add("Atan", 7, 22, op_atan);
  r.add("Atanh", 9, 22, op_atanh);
  r.add("BitCast", 26, 26, op_bit_cast);
  r.add("BitShift", 11, 11, op_bit_shift);
  r.add("BitwiseAnd", 18, 18, op_bitwise_and);
  r.add("BitwiseNot", 18, 18, op_bitwise_not);
  r.add("BitwiseOr", 18, 18, op_bitwise_or);
  r.add("BitwiseXor", 18, 18, op_bitwise_xor);
  r.add("Cast", 1, 25, op_cast);
  r.add("CastLike", 15, 25, op_cast_like);
  r.add("Ceil", 1, 13, op_ceil);
  r.add("Cos", 7, 22, op_cos);
  r.add("Cosh", 9, 22, op_cosh);
  r.add("Div", 1, 14, op_div);
  r.add("Equal", 1, 19, op_equal);
  r.add("Erf", 9, 13, op_erf);
  r.add("Exp", 1, 13, op_exp);
  r.add("Floor", 1, 13, op_floor);
  r.add("Gelu", 20, 20, op_gelu);
  r.add("Greater", 1, 13, op_greater);
  r.add("GreaterOrEqual", 12, 16, op_greater_or_equal);
  r.add("IsInf", 10, 20, op_is_inf);
  r.add("IsNaN", 9, 20, op_is_nan);
  r.add("Less", 1, 13, op_less);
  r.add("LessOrEqual", 12, 16, op_less_or_equal);
  r.add("Log", 1, 13, op_log);
  r.add("Max", 1, 13, op_max);
  r.add("Mean", 1, 13, op_mean);
  r.add("Min", 1, 13, op_min);
  r.add("Mish", 18, 22, op_mish);
  r.add("Mod", 10, 13, op_mod);
  r.add("Mul", 1, 14, op_mul);
  r.add("Neg", 1, 13, op_neg);
  r.add("Not", 1, 1, op_not);
  r.add("Or", 1, 7, op_or);
  r.add("PRelu", 1, 16, op_prelu);
  r.add("Pow", 1, 15, op_pow);
  r.add("Reciprocal", 1, 13, op_reciprocal);
  r.add("Round", 11, 22, op_round);
  r.add("Shrink", 9, 9, op_shrink);
  r.add("Sign", 9, 13, op_sign);
  r.add("Sin", 7, 22, op_sin);
  r.add("Sinh", 9, 22, op_sinh);
  r.add("Sqrt", 1, 13, op_sqrt);
  r.add("Sub", 1, 14, op_sub);
  r.add("Sum", 1, 13, op_sum);
  r.add("Tan", 7, 22, op_tan);
  r.add("Where", 9, 16, op_where);
  r.add("Xor", 1, 7, op_xor);
}

}  // namespace bnorm::eval
