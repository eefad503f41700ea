// The op functions of sequences (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_concat_from_sequence(const OpContext& ctx);
Tensors op_sequence_at(const OpContext& ctx);
Tensors op_sequence_construct(const OpContext& ctx);
Tensors op_sequence_empty(const OpContext& ctx);
Tensors op_sequence_erase(const OpContext& ctx);
Tensors op_sequence_insert(const OpContext& ctx);
Tensors op_sequence_length(const OpContext& ctx);
Tensors op_split_to_sequence(const OpContext& ctx);

}  // namespace bnorm::eval
