// The activation ops as values, so a normalization node can apply its
// consumer's activation in the same pass (fusion). The formulas live in
// kernels/activation.h (kernels::activate, THE definition); the standalone
// activation ops and the fused path here both evaluate it per element in
// the same compute type, which is what makes fused float/double results
// bitwise the unfused ones.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "kernels/activation.h"
#include "model/tensor.h"

namespace bnorm::eval {

// alpha: LeakyRelu/Elu/Selu/Celu/HardSigmoid/ThresholdedRelu's alpha, Clip's
// min; beta: Selu's gamma, HardSigmoid's beta, Clip's max.
using Activation = kernels::Activation;

bool is_activation_op(const std::string& op_type);

// The activation `node` computes at schema `version`; `inputs` are its
// inputs by position (Clip >= 11 reads min/max from inputs 1 and 2).
Activation read_activation(const onnx::NodeProto& node, int version, const std::vector<const Tensor*>& inputs);

template <typename T>
inline T apply(const Activation& a, T x) noexcept {
  return kernels::apply_activation(x, a);
}

}  // namespace bnorm::eval
