// The normalization kernels the evaluator calls, behind one small interface
// so the evaluator does not depend on how they are implemented: this file
// and norm_compute.cpp are the only ones to change to run them on other
// kernels.
//
// Data is a dense [N, C, S] tensor (kernels/layout.h) of storage type `t`
// (float, double, float16, bfloat16); parameters are already in the compute
// type P: float for float/float16/bfloat16 data, double for double data.
// float16/bfloat16 elements are computed in float and rounded once.
#pragma once

#include "eval/activation.h"
#include "kernels/layout.h"
#include "model/tensor.h"

namespace bnorm::eval {

// Y = act(X * scale + shift) per channel, with (scale, shift) =
// kernels::to_affine(scale, bias, mean, var, epsilon). `act` may be null.
template <typename P>
void bn_inference(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::BnInferParams<P>& p,
                  const Activation* act);

// Mean and population variance of every channel over N and S (two passes,
// accumulated in double, rounded once to P).
template <typename P>
void channel_statistics(DType t, const void* x, kernels::NcsShape shape, P* mean, P* var);

// InstanceNormalization: statistics per (n, c) over S, then
// Y = act((X - mean) / sqrt(var + eps) * scale[c] + bias[c]).
template <typename P>
void instance_norm(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::NormParams<P>& p,
                   const Activation* act);

}  // namespace bnorm::eval
