// The 8-bit matrix product of igemm.h at the Generic level (see
// igemm_impl.h): int16 pairs in 32-bit lanes, 4 rows by 2 vectors of C per
// tile.
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/igemm_impl.h"

namespace bnorm::kernels::detail {

BNORM_ENTRY_GENERIC void igemm_generic(const IgemmArgs& g) noexcept {
  igemm_body<IgemmPairsPortable<simd::u32x4, simd::i32x4>, 4, 2>(g);
}

}  // namespace bnorm::kernels::detail
