// Linear quantization of float32 to 8 bits and back, and the requantization
// of int32 sums, as ONNX's QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear and QLinearConv/QLinearMatMul compute them:
//
//   quantize_f32:    y = saturate(round_half_even(x / scale) + zp)
//                    (the quotient a float division; NaN -> zp)
//   dequantize_f32:  y = float(x - zp) * scale (one float multiply)
//   requantize:      y = saturate(round_half_even(double(acc + bias) * mult) + zp)
//                    (the product in double; NaN -> zp)
//   range_f32:       min and max of 0 and the non-NaN elements of x
//
// y (or x) is uint8 (is_signed false) or int8, saturate clamps to its range.
// Rounding to an integer is exact at any value (x + 1.5*2^p - 1.5*2^p,
// ties to even, on a value first clamped to where that is exact: the
// clamp never changes a saturated result). Plain loops the compiler
// vectorizes; the same bits on every CPU. Never throw, allocate nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bnorm::kernels {

void quantize_f32(const float* x, size_t n, float scale, int32_t zp, void* y, bool is_signed) noexcept;
void dequantize_f32(const void* x, size_t n, bool is_signed, int32_t zp, float scale, float* y) noexcept;
void requantize(const int32_t* acc, size_t n, int64_t bias, double mult, int32_t zp, void* y, bool is_signed) noexcept;
void range_f32(const float* x, size_t n, float& lo, float& hi) noexcept;

}  // namespace bnorm::kernels
