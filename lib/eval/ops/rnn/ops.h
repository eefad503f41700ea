// The op functions of recurrent networks (one per behaviour; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"
#include "eval/ops/rnn/rnn_common.h"

namespace bnorm::eval {


}  // namespace bnorm::eval
