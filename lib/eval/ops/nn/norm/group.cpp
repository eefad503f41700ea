// GroupNormalization and MeanVarianceNormalization: statistics over groups
// of axes, in float64.
//
//   GroupNormalization  X [N, C, D1..Dn] (rank >= 2), num_groups G (required,
//                       >= 1, dividing C), epsilon (1e-5):
//                         y = scale * (x - mean) / sqrt(var + epsilon) + bias,
//                       mean and population variance per (n, group of C / G
//                       channels) (kernels/group_norm.h: InstanceNormalization's
//                       arithmetic). Version 18: scale and bias have G
//                       elements, one per group; 21: C, one per channel, and
//                       stash_type (any floating type; stage one stays float64).
//                       Types: f32, f64, f16, bf16, scale and bias of X's type.
//   MeanVarianceNormalization
//                       y = (x - mean) / (sqrt(var) + 1e-9), mean and population
//                       variance over the reduced axes (kernels/strided_norm.h).
//                       9, 13: the axes attribute (default [0, 2, 3]; negative
//                       allowed; an empty list reduces every axis, as
//                       ReduceMean does). 1 (experimental, opsets 1..8): the
//                       axes [2, rank) or with across_channels = 1 [1, rank),
//                       and normalize_variance = 0 gives x - mean.
//                       Types: f32, f64, f16; bf16 from 13.
//
// The 1e-9 is the epsilon of ONNX's function body for versions 9 and 13
// (added to the standard deviation) and of Caffe's MVN, which version 1
// follows. The variance is the two-pass population variance, where the
// function body computes E[x^2] - E[x]^2 (which can cancel to a negative
// number and give NaN): bnorm computes the quantity that formula means.
#include <algorithm>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/nn/norm/family.h"
#include "eval/ops/nn/norm/ops.h"
#include "kernels/group_norm.h"
#include "kernels/strided_norm.h"

namespace bnorm::eval {

namespace {

constexpr double kMvnEpsilon = 1e-9;

template <class T, class P>
void run_group_norm(const Tensor& x, Tensor& y, kernels::NcsShape shape, size_t groups,
                    const kernels::NormParams<P>& p) {
  const T* in = x.data<T>();
  T* out = y.data<T>();
  if constexpr (std::is_same_v<T, float>) kernels::group_norm_f32(in, out, shape, groups, p);
  if constexpr (std::is_same_v<T, double>) kernels::group_norm_f64(in, out, shape, groups, p);
  if constexpr (std::is_same_v<T, kernels::f16>) kernels::group_norm_f16(in, out, shape, groups, p);
  if constexpr (std::is_same_v<T, kernels::bf16>) kernels::group_norm_bf16(in, out, shape, groups, p);
}

// Per-channel values of a parameter: as given (21), or each group's value
// repeated over its channels (18).
template <class P>
std::vector<P> per_channel(const Tensor& t, int64_t channels, int64_t groups, bool per_group) {
  const std::vector<P> v = load_values<P>(t);
  if (!per_group) return v;
  std::vector<P> out(static_cast<size_t>(channels));
  const int64_t per = channels / groups;
  for (int64_t c = 0; c < channels; ++c) out[static_cast<size_t>(c)] = v[static_cast<size_t>(c / per)];
  return out;
}

// The reduced axes of MeanVarianceNormalization at its version.
std::vector<bool> mvn_reduced(const OpContext& ctx, const Tensor& x) {
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  if (ctx.version == 1) {
    if (rank < 2) fail(ErrorKind::input, "input 'input' must have rank 2 or more, has shape {}", shape_str(x.dims));
    const int64_t across = attr_int(*ctx.node, "across_channels", 0);
    if (across != 0 && across != 1) fail(ErrorKind::input, "across_channels must be 0 or 1, is {}", across);
    for (int64_t d = across ? 1 : 2; d < rank; ++d) reduced[static_cast<size_t>(d)] = true;
    return reduced;
  }
  const std::vector<int64_t> axes = attr_ints(*ctx.node, "axes").value_or(std::vector<int64_t>{0, 2, 3});
  if (axes.empty()) return std::vector<bool>(static_cast<size_t>(rank), true);
  for (int64_t a : axes) {
    const auto d = static_cast<size_t>(normalize_axis(a, rank, "axes"));
    if (reduced[d]) fail(ErrorKind::input, "axes names axis {} twice", d);
    reduced[d] = true;
  }
  return reduced;
}

}  // namespace

Tensors op_group_norm(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& scale = ctx.required(1, "scale");
  const Tensor& bias = ctx.required(2, "bias");
  require_same_type(scale, "scale", x);
  require_same_type(bias, "bias", x);
  if (x.dims.size() < 2) fail(ErrorKind::input, "input 'X' must have rank 2 or more, has shape {}", shape_str(x.dims));
  const int64_t channels = x.dims[1];
  const int64_t groups = attr_int(*ctx.node, "num_groups", 0);
  if (find_attr(*ctx.node, "num_groups") == nullptr) fail(ErrorKind::input, "attribute 'num_groups' is required");
  if (groups < 1 || channels % groups != 0) {
    fail(ErrorKind::input, "num_groups {} does not divide the {} channels into groups", groups, channels);
  }
  const bool per_group = ctx.version < 21;
  if (!per_group) read_stash_type(*ctx.node, {DType::float32, DType::float16, DType::float64, DType::bfloat16});
  check_vector_param(scale, "scale", per_group ? groups : channels);
  check_vector_param(bias, "bias", per_group ? groups : channels);
  const kernels::NcsShape shape{static_cast<size_t>(x.dims[0]), static_cast<size_t>(channels),
                                static_cast<size_t>(product(x.dims, 2))};
  Tensors out(1);
  out[0] = Tensor(x.dtype, x.dims);
  with_storage(x.dtype, "input 'X'", true, [&](auto tag) {
    using T = decltype(tag);
    using P = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const std::vector<P> s = per_channel<P>(scale, channels, groups, per_group);
    const std::vector<P> b = per_channel<P>(bias, channels, groups, per_group);
    const auto eps = static_cast<P>(attr_float(*ctx.node, "epsilon", 1e-5f));
    run_group_norm<T, P>(x, out[0], shape, static_cast<size_t>(groups), {s.data(), b.data(), eps});
  });
  return out;
}

Tensors op_mean_variance_norm(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, ctx.version == 1 ? "input" : "X");
  const std::vector<bool> reduced = mvn_reduced(ctx, x);
  bool normalize_variance = true;
  if (ctx.version == 1) {
    const int64_t nv = attr_int(*ctx.node, "normalize_variance", 1);
    if (nv != 0 && nv != 1) fail(ErrorKind::input, "normalize_variance must be 0 or 1, is {}", nv);
    normalize_variance = nv == 1;
  }
  // Neighbouring axes of one kind merge (a dim of 1 joins either), so the
  // kernel walks at most rank axes.
  std::vector<size_t> dims;
  std::vector<char> kinds;
  int64_t groups = 1;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (!reduced[d]) groups *= x.dims[d];
    if (x.dims[d] == 1) continue;
    if (!kinds.empty() && kinds.back() == static_cast<char>(reduced[d])) {
      dims.back() *= static_cast<size_t>(x.dims[d]);
    } else {
      dims.push_back(static_cast<size_t>(x.dims[d]));
      kinds.push_back(static_cast<char>(reduced[d]));
    }
  }
  if (dims.size() > kernels::kMaxMvnRank) fail(ErrorKind::unsupported, "input of rank {} is too large", dims.size());
  bool flags[kernels::kMaxMvnRank] = {};
  for (size_t d = 0; d < kinds.size(); ++d) flags[d] = kinds[d] != 0;
  Tensors out(1);
  out[0] = Tensor(x.dtype, x.dims);
  std::vector<double> work(2 * static_cast<size_t>(groups));
  with_storage(x.dtype, "input 'X'", ctx.version >= 13, [&](auto tag) {
    using T = decltype(tag);
    kernels::mean_variance_normalize(x.data<T>(), out[0].data<T>(), dims.data(), flags, dims.size(),
                                     {normalize_variance, kMvnEpsilon}, work.data());
  });
  return out;
}

}  // namespace bnorm::eval
