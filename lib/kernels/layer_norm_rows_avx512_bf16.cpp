// LayerNormalization and RMSNormalization rows with bfloat16 outputs at the
// Avx512 level on CPUs with AVX512-BF16 (isa.h's avx512_bf16_active()):
// layer_norm_rows_impl.h compiled with that extension, so that each
// vector of outputs is rounded by one VCVTNEPS2BF16 instead of integer
// operations. The same bits as every other level.
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

#define BNORM_LN_TARGET BNORM_TARGET_AVX512_BF16
constexpr bool kBf16Insn = true;
#include "kernels/layer_norm_rows_impl.h"

}  // namespace

template <class X>
void norm_rows_avx512_bf16(const X* x, bf16* y, size_t r0, size_t r1, size_t len,
                           const RowNormParams& p, double* mean, double* inv_std, bool stream) noexcept {
  rows(x, y, r0, r1, len, p, mean, inv_std, stream);
}

template void norm_rows_avx512_bf16<float>(const float*, bf16*, size_t, size_t, size_t, const RowNormParams&,
                                           double*, double*, bool) noexcept;
template void norm_rows_avx512_bf16<f16>(const f16*, bf16*, size_t, size_t, size_t, const RowNormParams&,
                                         double*, double*, bool) noexcept;
template void norm_rows_avx512_bf16<bf16>(const bf16*, bf16*, size_t, size_t, size_t, const RowNormParams&,
                                          double*, double*, bool) noexcept;

}  // namespace bnorm::kernels::detail
#endif
