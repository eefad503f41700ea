// The matrix product of gemm.h at the Avx512 level (see gemm_impl.h), in
// two widths picked at run time (isa.h, wide_products_active()):
//   gemm_avx512      12 rows by 2 vectors of C per tile in 512-bit vectors,
//                    for cores with full-width 512-bit datapaths (AMD Zen 5,
//                    Intel): 24 sums, 2 of B and A's broadcast fill the 32
//                    vector registers;
//   gemm_avx512_ymm  the same tile in 256-bit vectors, for AMD Zen 4, whose
//                    512-bit operations take two passes through 256-bit
//                    units (there 8 x 2 tiles of 512-bit vectors measured
//                    70 GFLOP/s where these measured 83 to 91).
// Both give the same bits: each element's fused multiply-adds are the same.
#pragma GCC optimize("fp-contract=off", "no-tree-loop-distribute-patterns")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/gemm_impl.h"

namespace bnorm::kernels::detail {

BNORM_GEMM_LEVEL(avx512, BNORM_ENTRY_AVX512, simd::f32x16, simd::f64x8, 12, 2)
BNORM_GEMM_LEVEL(avx512_ymm, BNORM_ENTRY_AVX512, simd::f32x8, simd::f64x4, 12, 2)

}  // namespace bnorm::kernels::detail
