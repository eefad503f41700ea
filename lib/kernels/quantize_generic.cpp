// The loops of quantize.h at the Generic level (see quantize_impl.h).
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/quantize_impl.h"

namespace bnorm::kernels::detail {

BNORM_QUANTIZE_LEVEL(generic, BNORM_ENTRY_GENERIC, 4)

}  // namespace bnorm::kernels::detail
