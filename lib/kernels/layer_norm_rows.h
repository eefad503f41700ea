// The Avx512 level's rows of norm_rows (layer_norm.h) for float, f16 and
// bf16 data (internal: for lib/kernels/layer_norm*.cpp), in their own
// translation unit (layer_norm_rows_avx512.cpp). The same bits as the other
// levels; float64 data stay with layer_norm.cpp's loops.
#pragma once

#include <cstddef>

#include "kernels/half.h"
#include "kernels/layer_norm.h"

namespace bnorm::kernels::detail {

// Rows [r0, r1) of x (rows of len), as norm_rows does them; `stream`: y may
// be stored with non-temporal stores (the caller fences them). Explicitly
// instantiated for X in {float, f16, bf16}, Y in {float, double, f16, bf16}.
template <class X, class Y>
void norm_rows_avx512(const X* x, Y* y, size_t r0, size_t r1, size_t len, const RowNormParams& p,
                      double* mean, double* inv_std, bool stream) noexcept;

// The same for bfloat16 outputs, with AVX512-BF16 (layer_norm_rows_avx512_bf16.cpp;
// only where avx512_bf16_active()). X in {float, f16, bf16}.
template <class X>
void norm_rows_avx512_bf16(const X* x, bf16* y, size_t r0, size_t r1, size_t len,
                           const RowNormParams& p, double* mean, double* inv_std, bool stream) noexcept;

}  // namespace bnorm::kernels::detail
