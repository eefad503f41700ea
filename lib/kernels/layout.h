// The one memory layout every kernel works on: a dense row-major tensor seen
// as [N, C, S], where N is the batch, C the channels and S the product of
// the spatial dimensions (S = 1 for [N, C] inputs). Element (n, c, s) is at
// (n * C + c) * S + s. Parameter structs pass per-channel arrays by raw
// pointer; the caller has already converted them to the compute type.
#pragma once

#include <cstddef>

namespace bnorm::kernels {

struct NcsShape {
  size_t n = 1;
  size_t c = 1;
  size_t s = 1;

  size_t elements() const noexcept { return n * c * s; }
};

// Inference BatchNormalization: C elements each (C * S for the legacy
// non-spatial form).
template <typename P>
struct BnInferParams {
  const P* scale;
  const P* bias;
  const P* mean;
  const P* var;
  P epsilon;
};

// Normalization with statistics computed from the data (BatchNormalization
// training mode, InstanceNormalization): scale and bias have C elements.
template <typename P>
struct NormParams {
  const P* scale;
  const P* bias;
  P epsilon;
};

}  // namespace bnorm::kernels
