// The normalization loops of affine_rows.h for bfloat16 data at the Avx512
// level on CPUs with AVX512-BF16 (see affine_rows_impl.h, and
// simd_avx512_bf16.h's Avx512Bf16): the same loops as
// affine_rows_avx512.cpp, the rounding to bfloat16 done by AVX512-BF16's
// instructions, the same bits.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/affine_rows_impl.h"
#include "kernels/simd_avx512_bf16.h"

namespace bnorm::kernels::detail {

BNORM_AFFINE_ROWS_DEFINE(avx512_bf16, BNORM_ENTRY_AVX512_BF16, simd::Avx512Bf16)
BNORM_AFFINE_ROWS_INSTANTIATE(avx512_bf16, bf16, float)

}  // namespace bnorm::kernels::detail
