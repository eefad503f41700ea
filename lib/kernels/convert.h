// Bulk conversions between the 16-bit float types and float.
//
//   convert_f16_to_f32 / convert_bf16_to_f32   exact
//   convert_f32_to_f16 / convert_f32_to_bf16   round to nearest, ties to even
//
// Bit for bit equal to the scalar functions of half.h for every input,
// NaNs included: decoding keeps sign and payload (signalling NaNs stay
// signalling), encoding keeps a NaN's sign and leading payload bits and
// sets its quiet bit (as F16C and VCVTNEPS2BF16 do), overflow gives
// infinity, subnormals round correctly.
// F16C does the f16 work where the CPU has it (see isa.h).
//
// Preconditions: x and y do not overlap; n elements each. Large arrays are
// split over the OpenMP threads.
#pragma once

#include <cstddef>

#include "kernels/half.h"

namespace bnorm::kernels {

void convert_f16_to_f32(const f16* x, float* y, size_t n) noexcept;
void convert_f32_to_f16(const float* x, f16* y, size_t n) noexcept;
void convert_bf16_to_f32(const bf16* x, float* y, size_t n) noexcept;
void convert_f32_to_bf16(const float* x, bf16* y, size_t n) noexcept;

}  // namespace bnorm::kernels
