// Elementwise activations, as one value type so a normalization node can
// apply its consumer's activation in the same pass (fusion). The standalone
// activation ops and the fused path both call apply() in the same compute
// type, which is what makes fused float/double results bitwise the unfused
// ones.
//
// Formulas (ONNX, all versions; alpha/beta/gamma as the node gives them):
//   Relu x<0 ? 0 : x            LeakyRelu x<0 ? alpha*x : x
//   Elu x<0 ? alpha*(e^x-1) : x  Selu x<=0 ? gamma*(alpha*e^x-alpha) : gamma*x
//   Celu max(0,x)+min(0,alpha*(e^(x/alpha)-1))
//   Sigmoid 1/(1+e^-x)          HardSigmoid max(0,min(1,alpha*x+beta))
//   HardSwish x*max(0,min(1,x/6+1/2))  Tanh   Softplus ln(e^x+1)
//   Softsign x/(1+|x|)          ThresholdedRelu x>alpha ? x : 0
//   Clip min(max(x,lo),hi)
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/tensor.h"

namespace bnorm::eval {

enum class ActKind {
  relu, leaky_relu, elu, selu, celu, sigmoid, hard_sigmoid, hard_swish, tanh, softplus, softsign,
  thresholded_relu, clip,
};

struct Activation {
  ActKind kind = ActKind::relu;
  double alpha = 0, beta = 0, gamma = 0;  // parameters; for Clip alpha = lo, beta = hi
};

bool is_activation_op(const std::string& op_type);

// The activation `node` computes at schema `version`; `inputs` are its
// inputs by position (Clip >= 11 reads min/max from inputs 1 and 2).
Activation read_activation(const onnx::NodeProto& node, int version, const std::vector<const Tensor*>& inputs);

template <typename T>
inline T apply(const Activation& a, T x) noexcept {
  const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
  switch (a.kind) {
    case ActKind::relu: return x < T(0) ? T(0) : x;
    case ActKind::leaky_relu: return x < T(0) ? alpha * x : x;
    case ActKind::elu: return x < T(0) ? alpha * (std::exp(x) - T(1)) : x;
    case ActKind::selu: {
      const T gamma = static_cast<T>(a.gamma);
      return x <= T(0) ? gamma * (alpha * std::exp(x) - alpha) : gamma * x;
    }
    case ActKind::celu:
      return std::max(T(0), x) + std::min(T(0), alpha * (std::exp(x / alpha) - T(1)));
    case ActKind::sigmoid: return T(1) / (T(1) + std::exp(-x));
    case ActKind::hard_sigmoid: return std::max(T(0), std::min(T(1), alpha * x + beta));
    case ActKind::hard_swish: return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
    case ActKind::tanh: return std::tanh(x);
    case ActKind::softplus: return x > T(30) ? x : std::log1p(std::exp(x));
    case ActKind::softsign: return x / (T(1) + std::fabs(x));
    case ActKind::thresholded_relu: return x > alpha ? x : T(0);
    case ActKind::clip: return std::isnan(x) ? x : std::min(std::max(x, alpha), beta);
  }
  return x;
}

}  // namespace bnorm::eval
