// Links against the installed bnorm and uses the shared BN math once.
#include <kernels/affine.h>
#include <model/tensor.h>

#include <cmath>
#include <cstdio>

int main() {
  bnorm::Tensor t(bnorm::DType::float32, {2, 3});
  const auto a = bnorm::kernels::to_affine(2.0, 1.0, 0.5, 3.0, 1e-5);
  const double want_scale = 2.0 / std::sqrt(3.0 + 1e-5);
  if (t.numel() != 6 || std::fabs(a.scale - want_scale) > 1e-12) {
    std::puts("consumer: wrong result");
    return 1;
  }
  std::puts("consumer: ok");
  return 0;
}
