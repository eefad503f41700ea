// The normalization loops (internal: for lib/kernels/*.cpp). Every kernel
// that writes normalized data ends here, with rows of one storage type and
// parameters already in the compute type C (float, or double for f64):
//
//   affine_rows:      rows consecutive rows of len elements, row r with
//                     its own op: y[i] = act(op_r(x[i])); the ops differ
//                     in m, a, b only (mode, kind, alpha, beta: ops[0]'s)
//     Identity  op(x) = x
//     Plain     op(x) = fma(x, a, b)                       (inference BN)
//     Centered  op(x) = fma(x - m, a, b)                   (batch statistics)
//   affine_elements:  rows rows of len elements, `stride` apart, all with
//                     the same per-element parameters:
//                     y[i] = act(fma(x[i] - m[i], a[i], b[i]))
//                     (m == nullptr: fma(x[i], a[i], b[i]))
//
// act is activate<kind>() of activation.h. fma is x * a + b rounded once
// to C (FMA3, or libm's fma at the Generic level), so results equal the
// scalar formula with std::fma bit for bit at every SIMD level; f16/bf16
// data are decoded exactly and rounded once at the end. y == x allowed,
// otherwise no overlap. `stream` selects non-temporal stores (see isa.h);
// the caller fences them (for_tasks). Both dispatch on active_isa() and
// run on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/activation.h"
#include "kernels/half.h"

namespace bnorm::kernels::detail {

enum class RowMode : uint8_t { Identity, Plain, Centered };

// Trivial (no member initializers), so arrays of them cost nothing.
template <class C>
struct RowOp {
  RowMode mode;
  C m;
  C a;
  C b;
  ActivationKind kind;
  C alpha;
  C beta;
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

void affine_rows(const float* x, float* y, size_t rows, size_t len, const RowOp<float>* ops,
                 bool stream) noexcept;
void affine_rows(const double* x, double* y, size_t rows, size_t len, const RowOp<double>* ops,
                 bool stream) noexcept;
void affine_rows(const f16* x, f16* y, size_t rows, size_t len, const RowOp<float>* ops,
                 bool stream) noexcept;
void affine_rows(const bf16* x, bf16* y, size_t rows, size_t len, const RowOp<float>* ops,
                 bool stream) noexcept;

void affine_elements(const float* x, float* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<float>& op, bool stream) noexcept;
void affine_elements(const double* x, double* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<double>& op, bool stream) noexcept;
void affine_elements(const f16* x, f16* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<float>& op, bool stream) noexcept;
void affine_elements(const bf16* x, bf16* y, size_t rows, size_t stride, size_t len,
                     const ElementOp<float>& op, bool stream) noexcept;

}  // namespace bnorm::kernels::detail
