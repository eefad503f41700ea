// InstanceNormalization (see instance_norm.h): per row, moments then the
// Centered mode of the normalization loops.
// No FMA contraction in to_affine, whatever flags the library is built with.
#pragma GCC optimize("fp-contract=off")

#include "kernels/instance_norm.h"

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/moments.h"
#include "kernels/normalize.h"

namespace bnorm::kernels {
namespace {

template <class T, class C>
void instance_norm(const T* x, T* y, NcsShape shape, const NormParams<C>& p) noexcept {
  const size_t total = shape.elements();
  if (total == 0) return;
  const bool stream = x != y && total * sizeof(T) >= streaming_threshold_bytes();
  const size_t S = shape.s;
  detail::for_tasks(shape.n * shape.c, total >= detail::kParallelMinElements, [&](size_t row) {
    const size_t c = row % shape.c;
    const detail::Moments m = detail::span_moments(x + row * S, S);
    const detail::RowOp<C> op =
        detail::centered_op<C>(m.mean(), m.variance(), p.scale[c], p.bias[c], p.epsilon);
    detail::affine_span(x + row * S, y + row * S, S, op, stream);
  });
}

}  // namespace

void instance_norm_f32(const float* x, float* y, NcsShape shape,
                       const NormParams<float>& p) noexcept {
  instance_norm(x, y, shape, p);
}
void instance_norm_f64(const double* x, double* y, NcsShape shape,
                       const NormParams<double>& p) noexcept {
  instance_norm(x, y, shape, p);
}
void instance_norm_f16(const f16* x, f16* y, NcsShape shape, const NormParams<float>& p) noexcept {
  instance_norm(x, y, shape, p);
}
void instance_norm_bf16(const bf16* x, bf16* y, NcsShape shape,
                        const NormParams<float>& p) noexcept {
  instance_norm(x, y, shape, p);
}

}  // namespace bnorm::kernels
