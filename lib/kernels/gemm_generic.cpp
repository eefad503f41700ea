// The matrix product of gemm.h at the Generic level (see gemm_impl.h):
// 4 rows by 2 vectors of C per tile. Separate multiply and add, as
// gemm.h specifies: contraction is off.
#pragma GCC optimize("fp-contract=off", "no-tree-loop-distribute-patterns")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/gemm_impl.h"

namespace bnorm::kernels::detail {

BNORM_GEMM_LEVEL(generic, BNORM_ENTRY_GENERIC, simd::f32x4, simd::f64x2, 4, 2)

}  // namespace bnorm::kernels::detail
