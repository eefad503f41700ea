// The loops of quantize.h at the Avx512 level (see quantize_impl.h).
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/quantize_impl.h"

namespace bnorm::kernels::detail {

BNORM_QUANTIZE_LEVEL(avx512, BNORM_ENTRY_AVX512, 16)

}  // namespace bnorm::kernels::detail
