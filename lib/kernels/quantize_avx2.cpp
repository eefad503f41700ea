// The loops of quantize.h at the Avx2 level (see quantize_impl.h).
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/quantize_impl.h"

namespace bnorm::kernels::detail {

BNORM_QUANTIZE_LEVEL(avx2, BNORM_ENTRY_AVX2, 8)

}  // namespace bnorm::kernels::detail
