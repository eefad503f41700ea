// Standalone activation kernels (see activation.h): the Identity mode of
// the normalization loops, so they evaluate activate<K>() exactly as the
// fused kernels do.
#include "kernels/activation.h"

#include "kernels/affine_rows.h"
#include "kernels/elementwise.h"
#include "kernels/isa.h"

namespace bnorm::kernels {
namespace {

template <class T, class C>
void activation(const T* x, T* y, size_t n, const Activation& act) noexcept {
  const detail::RowOp<C> op{detail::RowMode::Identity, 0, 1, 0, act.kind,
                            static_cast<C>(act.alpha), static_cast<C>(act.beta)};
  const bool stream = x != y && n * sizeof(T) >= streaming_threshold_bytes();
  const bool parallel = n >= detail::kParallelMinElements;
  const size_t tasks = detail::task_count(n, n, parallel);
  detail::for_tasks(tasks, parallel, stream, [&](size_t t) {
    const size_t begin = detail::task_begin(t, tasks, n);
    const size_t end = detail::task_begin(t + 1, tasks, n);
    detail::affine_rows(x + begin, y + begin, 1, end - begin, &op, stream);
  });
}

}  // namespace

const char* activation_name(ActivationKind kind) noexcept {
  using K = ActivationKind;
  switch (kind) {
    case K::None: return "None";
    case K::Relu: return "Relu";
    case K::LeakyRelu: return "LeakyRelu";
    case K::Elu: return "Elu";
    case K::Selu: return "Selu";
    case K::Celu: return "Celu";
    case K::Sigmoid: return "Sigmoid";
    case K::HardSigmoid: return "HardSigmoid";
    case K::HardSwish: return "HardSwish";
    case K::Tanh: return "Tanh";
    case K::Softplus: return "Softplus";
    case K::Softsign: return "Softsign";
    case K::ThresholdedRelu: return "ThresholdedRelu";
    case K::Clip: return "Clip";
    case K::SiLU: return "SiLU";
  }
  return "?";
}

void activation_f32(const float* x, float* y, size_t n, const Activation& act) noexcept {
  activation<float, float>(x, y, n, act);
}
void activation_f64(const double* x, double* y, size_t n, const Activation& act) noexcept {
  activation<double, double>(x, y, n, act);
}
void activation_f16(const f16* x, f16* y, size_t n, const Activation& act) noexcept {
  activation<f16, float>(x, y, n, act);
}
void activation_bf16(const bf16* x, bf16* y, size_t n, const Activation& act) noexcept {
  activation<bf16, float>(x, y, n, act);
}

}  // namespace bnorm::kernels
