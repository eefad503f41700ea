// The op functions of elementwise arithmetic, math, logic, comparison, cast, bitwise and trigonometric ops (one
// per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_abs(const OpContext& ctx);
Tensors op_acos(const OpContext& ctx);
Tensors op_acosh(const OpContext& ctx);
Tensors op_add(const OpContext& ctx);
Tensors op_and(const OpContext& ctx);
Tensors op_asin(const OpContext& ctx);
Tensors op_asinh(const OpContext& ctx);
Tensors op_atan(const OpContext& ctx);
Tensors op_atanh(const OpContext& ctx);
Tensors op_bit_cast(const OpContext& ctx);
Tensors op_bit_shift(const OpContext& ctx);
Tensors op_bitwise_and(const OpContext& ctx);
Tensors op_bitwise_not(const OpContext& ctx);
Tensors op_bitwise_or(const OpContext& ctx);
Tensors op_bitwise_xor(const OpContext& ctx);
Tensors op_cast(const OpContext& ctx);
Tensors op_cast_like(const OpContext& ctx);
Tensors op_ceil(const OpContext& ctx);
Tensors op_cos(const OpContext& ctx);
Tensors op_cosh(const OpContext& ctx);
Tensors op_div(const OpContext& ctx);
Tensors op_equal(const OpContext& ctx);
Tensors op_erf(const OpContext& ctx);
Tensors op_exp(const OpContext& ctx);
Tensors op_floor(const OpContext& ctx);
Tensors op_gelu(const OpContext& ctx);
Tensors op_greater(const OpContext& ctx);
Tensors op_greater_or_equal(const OpContext& ctx);
Tensors op_is_inf(const OpContext& ctx);
Tensors op_is_nan(const OpContext& ctx);
Tensors op_less(const OpContext& ctx);
Tensors op_less_or_equal(const OpContext& ctx);
Tensors op_log(const OpContext& ctx);
Tensors op_max(const OpContext& ctx);
Tensors op_mean(const OpContext& ctx);
Tensors op_min(const OpContext& ctx);
Tensors op_mish(const OpContext& ctx);
Tensors op_mod(const OpContext& ctx);
Tensors op_mul(const OpContext& ctx);
Tensors op_neg(const OpContext& ctx);
Tensors op_not(const OpContext& ctx);
Tensors op_or(const OpContext& ctx);
Tensors op_pow(const OpContext& ctx);
Tensors op_prelu(const OpContext& ctx);
Tensors op_reciprocal(const OpContext& ctx);
Tensors op_round(const OpContext& ctx);
Tensors op_shrink(const OpContext& ctx);
Tensors op_sign(const OpContext& ctx);
Tensors op_sin(const OpContext& ctx);
Tensors op_sinh(const OpContext& ctx);
Tensors op_sqrt(const OpContext& ctx);
Tensors op_sub(const OpContext& ctx);
Tensors op_sum(const OpContext& ctx);
Tensors op_tan(const OpContext& ctx);
Tensors op_where(const OpContext& ctx);
Tensors op_xor(const OpContext& ctx);

}  // namespace bnorm::eval
