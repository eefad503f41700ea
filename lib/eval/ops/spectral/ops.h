// The op functions of DFT, STFT and the window functions (one per behaviour; their versions are the rows of
// register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_blackman(const OpContext& ctx);
Tensors op_dft(const OpContext& ctx);
Tensors op_hamming(const OpContext& ctx);
Tensors op_hann(const OpContext& ctx);
Tensors op_mel_weight_matrix(const OpContext& ctx);
Tensors op_stft(const OpContext& ctx);

}  // namespace bnorm::eval
