// The matrix product of gemm.h at the Avx2 level (see gemm_impl.h):
// 6 rows by 2 vectors of C per tile. Separate multiply and add, as
// gemm.h specifies: contraction is off.
#pragma GCC optimize("fp-contract=off", "no-tree-loop-distribute-patterns")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/gemm_impl.h"

namespace bnorm::kernels::detail {

BNORM_GEMM_LEVEL(avx2, BNORM_ENTRY_AVX2, simd::f32x8, simd::f64x4, 6, 2)

}  // namespace bnorm::kernels::detail
