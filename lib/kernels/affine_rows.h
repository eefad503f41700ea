// The normalization loops (internal: for lib/kernels/*.cpp). Every kernel
// that writes normalized data ends here, with one span of one storage type
// and its parameters already in the compute type C (float, or double for
// f64 data):
//
//   affine_span:      y[i] = act(op(x[i]))                  one op per span
//     Identity  op(x) = x
//     Plain     op(x) = x * a + b                          (inference BN)
//     Centered  op(x) = (x - m) * a + b                    (batch statistics)
//   affine_elements:  y[i] = act((x[i] - m[i]) * a[i] + b[i])   per element
//                     (m == nullptr: x[i] * a[i] + b[i])
//
// act is activate<kind>() of activation.h. Each product and sum is rounded
// to C (no FMA), so results equal the scalar formula bit for bit at every
// SIMD level; f16/bf16 data are decoded exactly and rounded once at the
// end. y == x allowed, otherwise no overlap. `stream` selects non-temporal
// stores (see isa.h). They dispatch on active_isa() and run on the calling
// thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/activation.h"
#include "kernels/half.h"

namespace bnorm::kernels::detail {

enum class RowMode : uint8_t { Identity, Plain, Centered };

template <class C>
struct RowOp {
  RowMode mode = RowMode::Identity;
  C m = 0;
  C a = 1;
  C b = 0;
  ActivationKind kind = ActivationKind::None;
  C alpha = 0;
  C beta = 0;
};

template <class C>
struct ElementOp {
  const C* m;  // may be null
  const C* a;
  const C* b;
  ActivationKind kind;
  C alpha;
  C beta;
};

void affine_span(const float* x, float* y, size_t n, const RowOp<float>& op, bool stream) noexcept;
void affine_span(const double* x, double* y, size_t n, const RowOp<double>& op, bool stream) noexcept;
void affine_span(const f16* x, f16* y, size_t n, const RowOp<float>& op, bool stream) noexcept;
void affine_span(const bf16* x, bf16* y, size_t n, const RowOp<float>& op, bool stream) noexcept;

void affine_elements(const float* x, float* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept;
void affine_elements(const double* x, double* y, size_t n, const ElementOp<double>& op,
                     bool stream) noexcept;
void affine_elements(const f16* x, f16* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept;
void affine_elements(const bf16* x, bf16* y, size_t n, const ElementOp<float>& op,
                     bool stream) noexcept;

}  // namespace bnorm::kernels::detail
