// The inner stretch of a 1-D or 2-D MaxPool, for float data:
//
//   y[o] = the fold, over the window rows r = 0 .. nrows-1 in order and
//          then kx = 0 .. kw-1, of v = rows[r][o * sx + kx * dx]:
//          the first v, then each later v that is greater (v > y ? v : y)
//
// for o < n: every window position inside the input (the caller passes the
// in-bounds rows only, pointers at each row's first read column, and the
// outputs whose windows are not clipped). So a NaN first stays and a NaN
// later is passed over, and of equal values (+0 and -0) the first stays,
// as ONNX's reference (numpy's max over the window in order) and bnorm's
// scalar MaxPool do. 16 outputs at a time in AVX-512 vectors (stride 2 as
// two loads and one permutation; `_mm512_max_ps(v, y)` is that rule), the
// plain loop elsewhere: the same bits.
#pragma once

#include <cstddef>

namespace bnorm::kernels {

void max_pool_stretch(const float* const* rows, size_t nrows, size_t kw, size_t dx, size_t sx, size_t n,
                      float* y) noexcept;

}  // namespace bnorm::kernels
