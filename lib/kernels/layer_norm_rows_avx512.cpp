// LayerNormalization and RMSNormalization rows at the Avx512 level for
// float, f16 and bf16 data (layer_norm_rows.h): 8 float64 lanes a vector,
// every operation of layer_norm.cpp's loops in the same order, so the same
// bits:
// - the mean and variance are moments.h's (chunks of kMomentsChunk, the
//   shift k = float64 mean of the chunk's first 32 elements, e = x - k,
//   S1 and S2 over 32 fixed lanes, the lanes added pairwise, chunks merged
//   with merge()), written here without span_moments' per-call overhead,
//   which dominated rows of a few hundred elements;
// - the RMS sum of squares keeps its eight partial sums (one vector); RMS
//   rows of 16-bit data are decoded once, into a float64 copy that the
//   normalization reads (rms_rows_decoded), the next row decoded in the
//   loop that normalizes this one, and outputs beyond the streaming
//   threshold (isa.h) stored non-temporally;
// - y = ((x - mean) * inv_std) * scale + bias, each operation rounded in
//   float64, then once to Y (f16/bf16 through a float rounded to odd, as
//   norm_common.h). RMS skips the "- 0", which changes no bits.
// Tails use masked loads and stores instead of scalar loops: the masked
// lanes receive the same operations the scalar tails do.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"

#include "kernels/layer_norm_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/moments.h"
#include "kernels/simd.h"

#if BNORM_SIMD_LEVELS
namespace bnorm::kernels::detail {
namespace {

#define BNORM_LN_TARGET BNORM_TARGET_AVX512
constexpr bool kBf16Insn = false;
#include "kernels/layer_norm_rows_impl.h"

}  // namespace

template <class X, class Y>
void norm_rows_avx512(const X* x, Y* y, size_t r0, size_t r1, size_t len, const RowNormParams& p,
                      double* mean, double* inv_std, bool stream) noexcept {
  rows(x, y, r0, r1, len, p, mean, inv_std, stream);
}

#define BNORM_NORM_ROWS_AVX512(X, Y)                                                                  \
  template void norm_rows_avx512<X, Y>(const X*, Y*, size_t, size_t, size_t, const RowNormParams&, \
                                       double*, double*, bool) noexcept;
#define BNORM_NORM_ROWS_AVX512_FROM(X) \
  BNORM_NORM_ROWS_AVX512(X, float)     \
  BNORM_NORM_ROWS_AVX512(X, double)    \
  BNORM_NORM_ROWS_AVX512(X, f16)       \
  BNORM_NORM_ROWS_AVX512(X, bf16)
BNORM_NORM_ROWS_AVX512_FROM(float)
BNORM_NORM_ROWS_AVX512_FROM(f16)
BNORM_NORM_ROWS_AVX512_FROM(bf16)

}  // namespace bnorm::kernels::detail
#endif
