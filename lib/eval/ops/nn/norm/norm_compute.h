// The normalization kernels the evaluator calls, behind one small interface:
// norm_compute.cpp is the only evaluator file that knows which kernel runs
// (lib/kernels: bn_infer, bn_train, instance_norm, activation).
//
// Data is a dense [N, C, S] tensor (kernels/layout.h) of storage type `t`
// (float, double, float16, bfloat16); parameters are already in the compute
// type P: float for float/float16/bfloat16 data, double for double data.
// float16/bfloat16 elements are computed in float and rounded once.
// `act` (may be null) is applied to Y: in the same pass for inference BN,
// after the normalization for the others; either way float/double results
// are bitwise those of the standalone activation op.
#pragma once

#include <cstddef>

#include "eval/ops/activation/activation.h"
#include "kernels/layout.h"
#include "model/tensor.h"

namespace bnorm::eval {

// Y = act(X * scale + shift) per channel, (scale, shift) = to_affine(...).
template <typename P>
void bn_inference(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::BnInferParams<P>& p,
                  const Activation* act);

// BN training: the batch mean and population variance of every channel
// (over N and S, in double) into mean/var, and Y normalized with them.
template <typename P>
void bn_training(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::NormParams<P>& p,
                 double* mean, double* var, const Activation* act);

// out = input * momentum + current * (1 - momentum), in double.
void running_update(const double* input, const double* current, double* out, size_t c, double momentum);

// InstanceNormalization: statistics per (n, c) over S.
template <typename P>
void instance_norm(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::NormParams<P>& p,
                   const Activation* act);

// Y = act(X) in place on `n` elements of floating type `t`.
void activation_in_place(DType t, void* y, size_t n, const Activation& act);

}  // namespace bnorm::eval
