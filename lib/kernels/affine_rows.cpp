// The entry points of affine_rows.h: dispatch to the loops of the active
// SIMD level (affine_rows_<level>.cpp).
#include "kernels/affine_rows.h"

#include "kernels/affine_rows_impl.h"
#include "kernels/isa.h"

namespace bnorm::kernels::detail {
namespace {

template <class T, class C>
void span_dispatch(const T* x, T* y, size_t n, const RowOp<C>& op, bool stream) noexcept {
  if (n == 0) return;
  switch (active_isa()) {
    case Isa::Avx512: return span_avx512(x, y, n, op, stream);
    case Isa::Avx2: return span_avx2(x, y, n, op, stream);
    case Isa::Generic: return span_generic(x, y, n, op, stream);
  }
}

template <class T, class C>
void elements_dispatch(const T* x, T* y, size_t n, const ElementOp<C>& op, bool stream) noexcept {
  if (n == 0) return;
  switch (active_isa()) {
    case Isa::Avx512: return elements_avx512(x, y, n, op, stream);
    case Isa::Avx2: return elements_avx2(x, y, n, op, stream);
    case Isa::Generic: return elements_generic(x, y, n, op, stream);
  }
}

}  // namespace

void affine_span(const float* x, float* y, size_t n, const RowOp<float>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}
void affine_span(const double* x, double* y, size_t n, const RowOp<double>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}
void affine_span(const f16* x, f16* y, size_t n, const RowOp<float>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}
void affine_span(const bf16* x, bf16* y, size_t n, const RowOp<float>& op, bool stream) noexcept {
  span_dispatch(x, y, n, op, stream);
}

void affine_elements(const float* x, float* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}
void affine_elements(const double* x, double* y, size_t n, const ElementOp<double>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}
void affine_elements(const f16* x, f16* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}
void affine_elements(const bf16* x, bf16* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept {
  elements_dispatch(x, y, n, op, stream);
}

}  // namespace bnorm::kernels::detail
