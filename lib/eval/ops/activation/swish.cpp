// Swish (24) and SwiGLU (28): the gated activations of opsets 24..28.
//
// Contract:
//   Swish(alpha)   Y = X * Sigmoid(alpha * X), Y of X's shape and type.
//   SwiGLU(alpha)  Y = Swish_alpha(A) * B; A and B of one shape and type
//       (no broadcasting: other shapes are Error(input)), Y of that shape.
// Types: float16, bfloat16, float, double; any other is Error(input).
// Decisions: float data (float16 and bfloat16 widened) compute in float,
// double in double, as the other activations: alpha * x is rounded to the
// compute type, Sigmoid is kernels::activate<Sigmoid> (the Sigmoid op's own
// definition), and each product is rounded to it, so float and double
// results are bitwise those of the decompositions (Mul, Sigmoid, Mul) bnorm
// runs; float16 and bfloat16 round once at the end (the decomposition rounds
// after every node). alpha is a float attribute (default 1.0), read as float.
#include "eval/ops/activation/ops.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "kernels/activation.h"
#include "model/attrs.h"

namespace bnorm::eval {

namespace {

template <typename S>
inline S swish(S x, S alpha) {
  return x * kernels::activate<kernels::ActivationKind::Sigmoid>(alpha * x, S(0), S(0));
}

void check_type(const OpContext& ctx, const Tensor& t, const char* what) {
  if (!is_floating(t.dtype)) {
    fail(ErrorKind::input, "{}-{} does not take {} input '{}'", ctx.node->op_type(), ctx.version, dtype_name(t.dtype),
         what);
  }
}

}  // namespace

Tensors op_swish(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  check_type(ctx, x, "X");
  const float alpha = attr_float(*ctx.node, "alpha", 1.0f);
  Tensor y(x.dtype, x.dims);
  with_float_type(x.dtype, "X", [&](auto tag) {
    using S = decltype(tag);
    std::vector<S> keep;
    const S* v = values_as<S>(x, keep);
    std::vector<S> out(static_cast<size_t>(x.numel()));
    const auto a = static_cast<S>(alpha);
    for (size_t i = 0; i < out.size(); ++i) out[i] = swish(v[i], a);
    store_values(y, out.data());
  });
  return one_tensor(std::move(y));
}

Tensors op_swiglu(const OpContext& ctx) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  check_type(ctx, a, "A");
  if (b.dtype != a.dtype) {
    fail(ErrorKind::input, "A is {} and B {}: they must have one type", dtype_name(a.dtype), dtype_name(b.dtype));
  }
  if (b.dims != a.dims) {
    fail(ErrorKind::input, "A has shape {} and B {}: SwiGLU does not broadcast", shape_str(a.dims), shape_str(b.dims));
  }
  const float alpha = attr_float(*ctx.node, "alpha", 1.0f);
  Tensor y(a.dtype, a.dims);
  with_float_type(a.dtype, "A", [&](auto tag) {
    using S = decltype(tag);
    std::vector<S> keep_a, keep_b;
    const S* va = values_as<S>(a, keep_a);
    const S* vb = values_as<S>(b, keep_b);
    std::vector<S> out(static_cast<size_t>(a.numel()));
    const auto al = static_cast<S>(alpha);
    for (size_t i = 0; i < out.size(); ++i) out[i] = swish(va[i], al) * vb[i];
    store_values(y, out.data());
  });
  return one_tensor(std::move(y));
}

}  // namespace bnorm::eval
