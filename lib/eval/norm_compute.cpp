#include "eval/norm_compute.h"

#include <vector>

#include "core/error.h"
#include "kernels/affine.h"
#include "kernels/half.h"

namespace bnorm::eval {

namespace {

// Loading a storage element into compute type P and storing one back.
template <typename S> struct Elem;
template <> struct Elem<float> {
  static float load(float v) { return v; }
  template <typename P> static float store(P v) { return static_cast<float>(v); }
};
template <> struct Elem<double> {
  static double load(double v) { return v; }
  template <typename P> static double store(P v) { return static_cast<double>(v); }
};
template <> struct Elem<kernels::f16> {
  static float load(kernels::f16 v) { return kernels::f16_to_f32(v); }
  template <typename P> static kernels::f16 store(P v) { return kernels::f64_to_f16(v); }
};
template <> struct Elem<kernels::bf16> {
  static float load(kernels::bf16 v) { return kernels::bf16_to_f32(v); }
  template <typename P> static kernels::bf16 store(P v) { return kernels::f64_to_bf16(v); }
};

// Calls f(S{}) for the storage type of `t`.
template <typename F>
void with_storage(DType t, F&& f) {
  switch (t) {
    case DType::float32: f(float{}); return;
    case DType::float64: f(double{}); return;
    case DType::float16: f(kernels::f16{}); return;
    case DType::bfloat16: f(kernels::bf16{}); return;
    default: fail(ErrorKind::unsupported, "normalization of {} data is not supported", dtype_name(t));
  }
}

// y[i] = act(x[i] * a.scale + a.shift) for one contiguous run.
template <typename S, typename P, bool Act>
void affine_run(const S* x, S* y, size_t n, kernels::Affine<P> a, const Activation* act) {
  for (size_t i = 0; i < n; ++i) {
    P v = static_cast<P>(Elem<S>::load(x[i])) * a.scale + a.shift;
    if constexpr (Act) v = apply(*act, v);
    y[i] = Elem<S>::template store<P>(v);
  }
}

template <typename S, typename P>
void affine_all(const S* x, S* y, kernels::NcsShape sh, const std::vector<kernels::Affine<P>>& aff,
                const Activation* act) {
  const auto rows = static_cast<int64_t>(sh.n * sh.c);
#pragma omp parallel for schedule(static) if (rows * static_cast<int64_t>(sh.s) > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    const size_t c = static_cast<size_t>(r) % sh.c;
    const size_t off = static_cast<size_t>(r) * sh.s;
    if (act) affine_run<S, P, true>(x + off, y + off, sh.s, aff[c], act);
    else affine_run<S, P, false>(x + off, y + off, sh.s, aff[c], act);
  }
}

}  // namespace

template <typename P>
void bn_inference(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::BnInferParams<P>& p,
                  const Activation* act) {
  std::vector<kernels::Affine<P>> aff(shape.c);
  for (size_t c = 0; c < shape.c; ++c) aff[c] = kernels::to_affine(p.scale[c], p.bias[c], p.mean[c], p.var[c], p.epsilon);
  with_storage(t, [&](auto tag) {
    using S = decltype(tag);
    affine_all<S, P>(static_cast<const S*>(x), static_cast<S*>(y), shape, aff, act);
  });
}

template <typename P>
void channel_statistics(DType t, const void* x, kernels::NcsShape shape, P* mean, P* var) {
  with_storage(t, [&](auto tag) {
    using S = decltype(tag);
    const S* xs = static_cast<const S*>(x);
    const double count = static_cast<double>(shape.n * shape.s);
    for (size_t c = 0; c < shape.c; ++c) {
      double sum = 0;
      for (size_t n = 0; n < shape.n; ++n) {
        const S* row = xs + (n * shape.c + c) * shape.s;
        for (size_t s = 0; s < shape.s; ++s) sum += static_cast<double>(Elem<S>::load(row[s]));
      }
      const double m = sum / count;
      double sq = 0;
      for (size_t n = 0; n < shape.n; ++n) {
        const S* row = xs + (n * shape.c + c) * shape.s;
        for (size_t s = 0; s < shape.s; ++s) {
          const double d = static_cast<double>(Elem<S>::load(row[s])) - m;
          sq += d * d;
        }
      }
      mean[c] = static_cast<P>(m);
      var[c] = static_cast<P>(sq / count);
    }
  });
}

template <typename P>
void instance_norm(DType t, const void* x, void* y, kernels::NcsShape shape, const kernels::NormParams<P>& p,
                   const Activation* act) {
  std::vector<kernels::Affine<P>> aff(shape.n * shape.c);
  for (size_t n = 0; n < shape.n; ++n) {
    const size_t off = n * shape.c * shape.s;
    std::vector<P> mean(shape.c), var(shape.c);
    channel_statistics<P>(t, static_cast<const uint8_t*>(x) + off * dtype_size(t), {1, shape.c, shape.s},
                          mean.data(), var.data());
    for (size_t c = 0; c < shape.c; ++c) {
      aff[n * shape.c + c] = kernels::to_affine(p.scale[c], p.bias[c], mean[c], var[c], p.epsilon);
    }
  }
  // One "channel" per (n, c) row.
  with_storage(t, [&](auto tag) {
    using S = decltype(tag);
    affine_all<S, P>(static_cast<const S*>(x), static_cast<S*>(y), {1, shape.n * shape.c, shape.s}, aff, act);
  });
}

template void bn_inference<float>(DType, const void*, void*, kernels::NcsShape, const kernels::BnInferParams<float>&,
                                  const Activation*);
template void bn_inference<double>(DType, const void*, void*, kernels::NcsShape,
                                   const kernels::BnInferParams<double>&, const Activation*);
template void channel_statistics<float>(DType, const void*, kernels::NcsShape, float*, float*);
template void channel_statistics<double>(DType, const void*, kernels::NcsShape, double*, double*);
template void instance_norm<float>(DType, const void*, void*, kernels::NcsShape, const kernels::NormParams<float>&,
                                   const Activation*);
template void instance_norm<double>(DType, const void*, void*, kernels::NcsShape,
                                    const kernels::NormParams<double>&, const Activation*);

}  // namespace bnorm::eval
