// Inference BatchNormalization (see bn_infer.h): to_affine per channel, then
// the Plain mode of the normalization loops.
// No FMA contraction in to_affine, whatever flags the library is built with.
#pragma GCC optimize("fp-contract=off")

#include "kernels/bn_infer.h"

#include "kernels/affine.h"
#include "kernels/normalize.h"

namespace bnorm::kernels {
namespace {

template <class T, class C>
void bn_infer(const T* x, T* y, NcsShape shape, const BnInferParams<C>& p,
              const Activation& act) noexcept {
  const auto alpha = static_cast<C>(act.alpha);
  const auto beta = static_cast<C>(act.beta);
  detail::normalize_channels<T, C>(x, y, shape, [&](size_t c) {
    const Affine<C> f = to_affine(p.scale[c], p.bias[c], p.mean[c], p.var[c], p.epsilon);
    return detail::RowOp<C>{detail::RowMode::Plain, 0, f.scale, f.shift, act.kind, alpha, beta};
  });
}

NcsShape flattened(NcsShape shape) noexcept { return {shape.n, shape.c * shape.s, 1}; }

template <class C>
void bn_rows(C* y, size_t ld, size_t c0, size_t rows, size_t len, const BnInferParams<C>* p,
             const Activation& act) noexcept {
  const auto alpha = static_cast<C>(act.alpha);
  const auto beta = static_cast<C>(act.beta);
  for (size_t r = 0; r < rows; ++r) {
    detail::RowOp<C> op{detail::RowMode::Identity, 0, 1, 0, act.kind, alpha, beta};
    if (p) {
      const size_t c = c0 + r;
      const Affine<C> f = to_affine(p->scale[c], p->bias[c], p->mean[c], p->var[c], p->epsilon);
      op = {detail::RowMode::Plain, 0, f.scale, f.shift, act.kind, alpha, beta};
    }
    detail::affine_rows(y + r * ld, y + r * ld, 1, len, &op, false);
  }
}

}  // namespace

void bn_infer_f32(const float* x, float* y, NcsShape shape, const BnInferParams<float>& p,
                  const Activation& act) noexcept {
  bn_infer(x, y, shape, p, act);
}
void bn_infer_f64(const double* x, double* y, NcsShape shape, const BnInferParams<double>& p,
                  const Activation& act) noexcept {
  bn_infer(x, y, shape, p, act);
}
void bn_infer_f16(const f16* x, f16* y, NcsShape shape, const BnInferParams<float>& p,
                  const Activation& act) noexcept {
  bn_infer(x, y, shape, p, act);
}
void bn_infer_bf16(const bf16* x, bf16* y, NcsShape shape, const BnInferParams<float>& p,
                   const Activation& act) noexcept {
  bn_infer(x, y, shape, p, act);
}

void bn_infer_rows_f32(float* y, size_t ld, size_t c0, size_t rows, size_t len, const BnInferParams<float>* p,
                       const Activation& act) noexcept {
  bn_rows(y, ld, c0, rows, len, p, act);
}
void bn_infer_rows_f64(double* y, size_t ld, size_t c0, size_t rows, size_t len, const BnInferParams<double>* p,
                       const Activation& act) noexcept {
  bn_rows(y, ld, c0, rows, len, p, act);
}

void bn_infer_nonspatial_f32(const float* x, float* y, NcsShape shape,
                             const BnInferParams<float>& p, const Activation& act) noexcept {
  bn_infer(x, y, flattened(shape), p, act);
}
void bn_infer_nonspatial_f64(const double* x, double* y, NcsShape shape,
                             const BnInferParams<double>& p, const Activation& act) noexcept {
  bn_infer(x, y, flattened(shape), p, act);
}
void bn_infer_nonspatial_f16(const f16* x, f16* y, NcsShape shape, const BnInferParams<float>& p,
                             const Activation& act) noexcept {
  bn_infer(x, y, flattened(shape), p, act);
}
void bn_infer_nonspatial_bf16(const bf16* x, bf16* y, NcsShape shape,
                              const BnInferParams<float>& p, const Activation& act) noexcept {
  bn_infer(x, y, flattened(shape), p, act);
}

}  // namespace bnorm::kernels
