// The matrix product of gemm.h at the Avx512 level (see gemm_impl.h): 12
// rows by 2 vectors of C per tile, in 256-bit vectors, which the level's 32
// vector registers hold (24 sums, 2 of B, A's broadcast). On AMD Zen 4,
// whose 512-bit operations take two passes through 256-bit units, 8 x 2
// tiles of 512-bit vectors measured 70 GFLOP/s where these measure 83 to 91
// (bench: docs/performance.md). Separate multiply and add, as gemm.h
// specifies: contraction is off.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/gemm_impl.h"

namespace bnorm::kernels::detail {

BNORM_GEMM_LEVEL(avx512, BNORM_ENTRY_AVX512, simd::f32x8, simd::f64x4, 12, 2)

}  // namespace bnorm::kernels::detail
