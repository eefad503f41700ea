// The experimental ops of opsets 1..9, the spectral ops and the losses.
// Each family lives in its own file and registers its own rows:
//   ops_misc_experimental.cpp  ImageScaler, Crop, Affine, ScaledTanh,
//                              ParametricSoftplus, Scale, GivenTensorFill,
//                              ConstantFill, DynamicSlice (version 1 only:
//                              gone from opset 10)
//   ops_misc_spectral.cpp      DFT (17, 20), STFT (17)
//   ops_misc_window.cpp        HannWindow, HammingWindow, BlackmanWindow,
//                              MelWeightMatrix (17)
//   ops_misc_loss.cpp          NegativeLogLikelihoodLoss (12, 13, 22),
//                              SoftmaxCrossEntropyLoss (12, 13)
// GRUUnit is left out: see ops_misc_experimental.cpp.
#include "eval/ops.h"

namespace bnorm::eval {

void add_misc_experimental_ops(OpRegistry& r);
void add_misc_spectral_ops(OpRegistry& r);
void add_misc_window_ops(OpRegistry& r);
void add_misc_loss_ops(OpRegistry& r);

void add_misc_ops(OpRegistry& r) {
  add_misc_experimental_ops(r);
  add_misc_spectral_ops(r);
  add_misc_window_ops(r);
  add_misc_loss_ops(r);
}

}  // namespace bnorm::eval
