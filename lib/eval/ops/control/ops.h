// The op functions of control flow (If, Loop, Scan) and optionals (one per behaviour; their versions are the
// rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_if(const OpContext& ctx);
Tensors op_loop(const OpContext& ctx);
Tensors op_optional(const OpContext& ctx);
Tensors op_optional_get_element(const OpContext& ctx);
Tensors op_optional_has_element(const OpContext& ctx);
Tensors op_scan8(const OpContext& ctx);
Tensors op_scan9(const OpContext& ctx);
Tensors op_sequence_map(const OpContext& ctx);

}  // namespace bnorm::eval
