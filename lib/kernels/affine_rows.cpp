// The entry points of affine_rows.h: dispatch to the loops of the active
// SIMD level (affine_rows_<level>.cpp), and for bfloat16 at the Avx512
// level to affine_rows_avx512_bf16.cpp where AVX512-BF16 is active; float16
// at the level of f16_isa() (isa.h).
#include "kernels/affine_rows.h"

#include <type_traits>

#include "kernels/affine_rows_impl.h"
#include "kernels/isa.h"

namespace bnorm::kernels::detail {
namespace {

template <class T, class C>
void rows_dispatch(const T* x, T* y, size_t rows, size_t len, const RowOp<C>* ops,
                   bool stream) noexcept {
  if (rows == 0 || len == 0) return;
  if constexpr (std::is_same_v<T, bf16>) {
    if (active_isa() == Isa::Avx512 && avx512_bf16_active()) {
      return rows_avx512_bf16(x, y, rows, len, ops, stream);
    }
  }
  switch (std::is_same_v<T, f16> ? f16_isa() : active_isa()) {
    case Isa::Avx512: return rows_avx512(x, y, rows, len, ops, stream);
    case Isa::Avx2: return rows_avx2(x, y, rows, len, ops, stream);
    case Isa::Generic: return rows_generic(x, y, rows, len, ops, stream);
  }
}

template <class T, class C>
void elements_dispatch(const T* x, T* y, size_t rows, size_t stride, size_t len,
                       const ElementOp<C>& op, bool stream) noexcept {
  if (rows == 0 || len == 0) return;
  if constexpr (std::is_same_v<T, bf16>) {
    if (active_isa() == Isa::Avx512 && avx512_bf16_active()) {
      return elements_avx512_bf16(x, y, rows, stride, len, op, stream);
    }
  }
  switch (std::is_same_v<T, f16> ? f16_isa() : active_isa()) {
    case Isa::Avx512: return elements_avx512(x, y, rows, stride, len, op, stream);
    case Isa::Avx2: return elements_avx2(x, y, rows, stride, len, op, stream);
    case Isa::Generic: return elements_generic(x, y, rows, stride, len, op, stream);
  }
}

}  // namespace

void affine_rows(const float* x, float* y, size_t rows, size_t len, const RowOp<float>* ops,
                 bool stream) noexcept {
  rows_dispatch(x, y, rows, len, ops, stream);
}
void affine_rows(const double* x, double* y, size_t rows, size_t len, const RowOp<double>* ops,
                 bool stream) noexcept {
  rows_dispatch(x, y, rows, len, ops, stream);
}
void affine_rows(const f16* x, f16* y, size_t rows, size_t len, const RowOp<float>* ops,
                 bool stream) noexcept {
  rows_dispatch(x, y, rows, len, ops, stream);
}
void affine_rows(const bf16* x, bf16* y, size_t rows, size_t len, const RowOp<float>* ops,
                 bool stream) noexcept {
  rows_dispatch(x, y, rows, len, ops, stream);
}

void affine_elements(const float* x, float* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<float>& op, bool stream) noexcept {
  elements_dispatch(x, y, rows, stride, len, op, stream);
}
void affine_elements(const double* x, double* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<double>& op, bool stream) noexcept {
  elements_dispatch(x, y, rows, stride, len, op, stream);
}
void affine_elements(const f16* x, f16* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<float>& op, bool stream) noexcept {
  elements_dispatch(x, y, rows, stride, len, op, stream);
}
void affine_elements(const bf16* x, bf16* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<float>& op, bool stream) noexcept {
  elements_dispatch(x, y, rows, stride, len, op, stream);
}

}  // namespace bnorm::kernels::detail
