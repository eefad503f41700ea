// The versions of DFT, STFT and the window functions bnorm implements: one row per behaviour, each a closed
// range of the op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/spectral/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_spectral_ops(OpRegistry& r) {
  r.add("BlackmanWindow", 17, 17, op_blackman);
  r.add("DFT", 17, 20, op_dft);
  r.add("HammingWindow", 17, 17, op_hamming);
  r.add("HannWindow", 17, 17, op_hann);
  r.add("MelWeightMatrix", 17, 17, op_mel_weight_matrix);
  r.add("STFT", 17, 17, op_stft);
}

}  // namespace bnorm::eval
