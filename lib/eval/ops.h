// Every op function the table in op_table.cpp dispatches to, by family,
// and the registration functions of the families that register their own
// rows (each defined in the family's file, called once by op_table.cpp).
#pragma once

#include "eval/op.h"

namespace bnorm::eval {

void add_rnn_ops(OpRegistry& r);        // ops_rnn.cpp: RNN, GRU, LSTM
void add_unary_ops(OpRegistry& r);      // ops_unary.cpp: elementwise math, bitwise, trigonometric
void add_indexing_ops(OpRegistry& r);   // ops_indexing.cpp: gather/scatter, sorting, generators
void add_resample_ops(OpRegistry& r);   // ops_resample.cpp: GridSample, pooling extras, layout moves
void add_quant_ops(OpRegistry& r);      // ops_quant.cpp: QuantizeLinear, DequantizeLinear, integer ops
void add_misc_ops(OpRegistry& r);       // ops_misc.cpp: experimental ops of opsets 1..9, the rest
void add_attention_ops(OpRegistry& r);  // ops_attention.cpp: Attention, RotaryEmbedding
void add_control_ops(OpRegistry& r);    // ops_control.cpp: Loop, Scan, sequences, optionals
void add_tfidf_ops(OpRegistry& r);      // ops_tfidf.cpp: TfIdfVectorizer (integer n-grams)
void add_norm_family_ops(OpRegistry& r);  // ops_norm_family.cpp: LayerNormalization, GroupNormalization, ...

// ops_activation.cpp: every op for which is_activation_op() holds.
Tensors op_activation(const OpContext& ctx);

// ops_norm.cpp
Tensors op_batch_norm(const OpContext& ctx);
Tensors op_instance_norm(const OpContext& ctx);

// ops_conv.cpp
Tensors op_conv(const OpContext& ctx);
Tensors op_conv_transpose(const OpContext& ctx);

// ops_gemm.cpp
Tensors op_gemm(const OpContext& ctx);
Tensors op_matmul(const OpContext& ctx);

// ops_elementwise.cpp
Tensors op_add(const OpContext& ctx);
Tensors op_sub(const OpContext& ctx);
Tensors op_mul(const OpContext& ctx);
Tensors op_div(const OpContext& ctx);
Tensors op_sqrt(const OpContext& ctx);
Tensors op_reciprocal(const OpContext& ctx);
Tensors op_cast(const OpContext& ctx);
Tensors op_cast_like(const OpContext& ctx);

// ops_shape.cpp
Tensors op_reshape(const OpContext& ctx);
Tensors op_flatten(const OpContext& ctx);
Tensors op_squeeze(const OpContext& ctx);
Tensors op_unsqueeze(const OpContext& ctx);
Tensors op_transpose(const OpContext& ctx);
Tensors op_identity(const OpContext& ctx);
Tensors op_constant(const OpContext& ctx);
Tensors op_dropout(const OpContext& ctx);
Tensors op_if(const OpContext& ctx);
Tensors op_shape(const OpContext& ctx);
Tensors op_constant_of_shape(const OpContext& ctx);

// ops_index.cpp
Tensors op_concat(const OpContext& ctx);
Tensors op_split(const OpContext& ctx);
Tensors op_gather(const OpContext& ctx);
Tensors op_slice(const OpContext& ctx);
Tensors op_tile(const OpContext& ctx);
Tensors op_expand(const OpContext& ctx);
Tensors op_size(const OpContext& ctx);

// ops_pad.cpp
Tensors op_pad(const OpContext& ctx);

// ops_resize.cpp
Tensors op_upsample(const OpContext& ctx);
Tensors op_resize(const OpContext& ctx);

// ops_math.cpp
Tensors op_neg(const OpContext& ctx);
Tensors op_abs(const OpContext& ctx);
Tensors op_exp(const OpContext& ctx);
Tensors op_log(const OpContext& ctx);
Tensors op_pow(const OpContext& ctx);
Tensors op_prelu(const OpContext& ctx);
Tensors op_sum(const OpContext& ctx);
Tensors op_max(const OpContext& ctx);
Tensors op_min(const OpContext& ctx);
Tensors op_mean(const OpContext& ctx);

// ops_logic.cpp
Tensors op_equal(const OpContext& ctx);
Tensors op_less(const OpContext& ctx);
Tensors op_greater(const OpContext& ctx);
Tensors op_less_or_equal(const OpContext& ctx);
Tensors op_greater_or_equal(const OpContext& ctx);
Tensors op_and(const OpContext& ctx);
Tensors op_or(const OpContext& ctx);
Tensors op_xor(const OpContext& ctx);
Tensors op_not(const OpContext& ctx);
Tensors op_where(const OpContext& ctx);

// ops_reduce.cpp
Tensors op_reduce_sum(const OpContext& ctx);
Tensors op_reduce_mean(const OpContext& ctx);
Tensors op_reduce_max(const OpContext& ctx);
Tensors op_reduce_min(const OpContext& ctx);
Tensors op_reduce_prod(const OpContext& ctx);
Tensors op_reduce_sum_square(const OpContext& ctx);
Tensors op_reduce_l1(const OpContext& ctx);
Tensors op_reduce_l2(const OpContext& ctx);
Tensors op_reduce_log_sum(const OpContext& ctx);
Tensors op_reduce_log_sum_exp(const OpContext& ctx);
Tensors op_softmax(const OpContext& ctx);
Tensors op_log_softmax(const OpContext& ctx);

// ops_pool.cpp
Tensors op_max_pool(const OpContext& ctx);
Tensors op_average_pool(const OpContext& ctx);
Tensors op_global_average_pool(const OpContext& ctx);

}  // namespace bnorm::eval
