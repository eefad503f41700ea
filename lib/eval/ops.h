// Every op function the table in op_table.cpp dispatches to, by family.
#pragma once

#include "eval/op.h"

namespace bnorm::eval {

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

// ops_reduce.cpp
Tensors op_reduce_mean(const OpContext& ctx);
Tensors op_softmax(const OpContext& ctx);

// ops_pool.cpp
Tensors op_max_pool(const OpContext& ctx);
Tensors op_average_pool(const OpContext& ctx);
Tensors op_global_average_pool(const OpContext& ctx);

}  // namespace bnorm::eval
