// The entry points of quantize.h: the dispatch to the active level's loops
// (quantize_impl.h).
#include "kernels/quantize.h"

#include "kernels/isa.h"
#include "kernels/quantize_impl.h"

namespace bnorm::kernels {

#define BNORM_QUANTIZE_DISPATCH(name, ...)                                \
  switch (active_isa()) {                                                 \
    case Isa::Avx512: return detail::name##_avx512(__VA_ARGS__);          \
    case Isa::Avx2: return detail::name##_avx2(__VA_ARGS__);              \
    case Isa::Generic: return detail::name##_generic(__VA_ARGS__);        \
  }

void quantize_f32(const float* x, size_t n, float scale, int32_t zp, void* y, bool is_signed) noexcept {
  BNORM_QUANTIZE_DISPATCH(quantize_f32, x, n, scale, zp, y, is_signed)
}

void dequantize_f32(const void* x, size_t n, bool is_signed, int32_t zp, float scale, float* y) noexcept {
  BNORM_QUANTIZE_DISPATCH(dequantize_f32, x, n, is_signed, zp, scale, y)
}

void requantize(const int32_t* acc, size_t n, int64_t bias, double mult, int32_t zp, void* y, bool is_signed) noexcept {
  BNORM_QUANTIZE_DISPATCH(requantize, acc, n, bias, mult, zp, y, is_signed)
}

void range_f32(const float* x, size_t n, float& lo, float& hi) noexcept {
  BNORM_QUANTIZE_DISPATCH(range_f32, x, n, lo, hi)
}

}  // namespace bnorm::kernels
