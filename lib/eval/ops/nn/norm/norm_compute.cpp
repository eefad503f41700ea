#include "eval/ops/nn/norm/norm_compute.h"

#include <type_traits>

#include "core/error.h"
#include "kernels/bn_infer.h"
#include "kernels/bn_train.h"
#include "kernels/half.h"
#include "kernels/instance_norm.h"

namespace bnorm::eval {

namespace {

using kernels::bf16;
using kernels::f16;

[[noreturn]] void unsupported(DType t) {
  fail(ErrorKind::unsupported, "normalization of {} data is not supported", dtype_name(t));
}

// The storage type of `t` must go with compute type P.
template <typename P>
void check_pair(DType t) {
  const bool is_double = t == DType::float64;
  if (!is_floating(t) || is_double != std::is_same_v<P, double>) unsupported(t);
}

}  // namespace

template <typename P>
void bn_inference(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::BnInferParams<P>& p,
                  const Activation* act) {
  check_pair<P>(t);
  const Activation a = act ? *act : Activation::none();
  if constexpr (std::is_same_v<P, double>) {
    kernels::bn_infer_f64(static_cast<const double*>(x), static_cast<double*>(y), shape, p, a);
  } else if (t == DType::float32) {
    kernels::bn_infer_f32(static_cast<const float*>(x), static_cast<float*>(y), shape, p, a);
  } else if (t == DType::float16) {
    kernels::bn_infer_f16(static_cast<const f16*>(x), static_cast<f16*>(y), shape, p, a);
  } else {
    kernels::bn_infer_bf16(static_cast<const bf16*>(x), static_cast<bf16*>(y), shape, p, a);
  }
}

template <typename P>
void bn_training(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::NormParams<P>& p,
                 double* mean, double* var, const Activation* act) {
  check_pair<P>(t);
  if constexpr (std::is_same_v<P, double>) {
    kernels::bn_train_f64(static_cast<const double*>(x), static_cast<double*>(y), shape, p, mean, var);
  } else if (t == DType::float32) {
    kernels::bn_train_f32(static_cast<const float*>(x), static_cast<float*>(y), shape, p, mean, var);
  } else if (t == DType::float16) {
    kernels::bn_train_f16(static_cast<const f16*>(x), static_cast<f16*>(y), shape, p, mean, var);
  } else {
    kernels::bn_train_bf16(static_cast<const bf16*>(x), static_cast<bf16*>(y), shape, p, mean, var);
  }
  if (act) activation_in_place(t, y, shape.elements(), *act);
}

void running_update(const double* input, const double* current, double* out, size_t c, double momentum) {
  kernels::bn_running_update(input, current, out, c, momentum);
}

template <typename P>
void instance_norm(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::NormParams<P>& p,
                   const Activation* act) {
  check_pair<P>(t);
  if constexpr (std::is_same_v<P, double>) {
    kernels::instance_norm_f64(static_cast<const double*>(x), static_cast<double*>(y), shape, p);
  } else if (t == DType::float32) {
    kernels::instance_norm_f32(static_cast<const float*>(x), static_cast<float*>(y), shape, p);
  } else if (t == DType::float16) {
    kernels::instance_norm_f16(static_cast<const f16*>(x), static_cast<f16*>(y), shape, p);
  } else {
    kernels::instance_norm_bf16(static_cast<const bf16*>(x), static_cast<bf16*>(y), shape, p);
  }
  if (act) activation_in_place(t, y, shape.elements(), *act);
}

void activation_in_place(DType t, void* y, size_t n, const Activation& act) {
  switch (t) {
    case DType::float32: kernels::activation_f32(static_cast<float*>(y), static_cast<float*>(y), n, act); return;
    case DType::float64: kernels::activation_f64(static_cast<double*>(y), static_cast<double*>(y), n, act); return;
    case DType::float16: kernels::activation_f16(static_cast<f16*>(y), static_cast<f16*>(y), n, act); return;
    case DType::bfloat16: kernels::activation_bf16(static_cast<bf16*>(y), static_cast<bf16*>(y), n, act); return;
    default: unsupported(t);
  }
}

template void bn_inference<float>(DType, const void*, void*, kernels::NcsShape, const kernels::BnInferParams<float>&,
                                  const Activation*);
template void bn_inference<double>(DType, const void*, void*, kernels::NcsShape,
                                   const kernels::BnInferParams<double>&, const Activation*);
template void bn_training<float>(DType, const void*, void*, kernels::NcsShape, const kernels::NormParams<float>&,
                                 double*, double*, const Activation*);
template void bn_training<double>(DType, const void*, void*, kernels::NcsShape, const kernels::NormParams<double>&,
                                  double*, double*, const Activation*);
template void instance_norm<float>(DType, const void*, void*, kernels::NcsShape, const kernels::NormParams<float>&,
                                   const Activation*);
template void instance_norm<double>(DType, const void*, void*, kernels::NcsShape,
                                    const kernels::NormParams<double>&, const Activation*);

}  // namespace bnorm::eval
