// The normalization loops of affine_rows.h at the Avx512 level (see
// affine_rows_impl.h). fma(x - m, a, b) rounds the subtraction and then the
// product-sum once, at every level; contraction is off for the rest.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/affine_rows_impl.h"

namespace bnorm::kernels::detail {

BNORM_AFFINE_ROWS_LEVEL(avx512, BNORM_ENTRY_AVX512, simd::Avx512)

}  // namespace bnorm::kernels::detail
