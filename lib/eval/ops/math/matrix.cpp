// Hardmax and Det: ops over whole rows or matrices of a floating tensor.
//
//   Hardmax  1 at the first maximum of each row, 0 elsewhere; a NaN counts
//            as the maximum (the first NaN wins), as numpy's argmax.
//     1, 11  the input is seen as a matrix [a_0 * ... * a_{k-1},
//            a_k * ... * a_{n-1}] at `axis` k (default 1) and each row of
//            it is one row. Version 1 does not define a negative axis, so
//            one is refused; 11 counts it from the back.
//     13     each line along `axis` (default -1) is one row.
//   Det (11, 22: types only)  X of shape [*, M, M] -> Y of shape [*], by LU
//            decomposition with partial pivoting in double, rounded once.
//            An empty matrix (M = 0) has determinant 1.
#include <cmath>
#include <utility>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/math/ops.h"

namespace bnorm::eval {

namespace {

const Tensor& floating_input(const OpContext& ctx, const char* op) {
  const Tensor& x = ctx.required(0, "input");
  if (!is_floating(x.dtype)) fail(ErrorKind::input, "{} takes floating types, not {}", op, dtype_name(x.dtype));
  return x;
}

}  // namespace

Tensors op_hardmax(const OpContext& ctx) {
  const Tensor& x = floating_input(ctx, "Hardmax");
  const auto rank = static_cast<int64_t>(x.dims.size());
  const int64_t raw = attr_int(*ctx.node, "axis", ctx.version >= 13 ? -1 : 1);
  if (ctx.version < 11 && raw < 0) fail(ErrorKind::input, "axis = {}: Hardmax-1 takes no negative axis", raw);
  const int64_t axis = normalize_axis(raw, rank);
  // Rows of `len` elements, `stride` apart, starting at outer * len * stride + inner.
  int64_t outer = product(x.dims, 0, static_cast<size_t>(axis));
  int64_t len = 0, stride = 1;
  if (ctx.version >= 13) {
    len = x.dims[static_cast<size_t>(axis)];
    stride = product(x.dims, static_cast<size_t>(axis) + 1);
  } else {
    len = product(x.dims, static_cast<size_t>(axis));
  }
  const std::vector<double> v = load_values<double>(x);
  std::vector<double> y(v.size(), 0.0);
  if (len > 0) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < stride; ++in) {
        const int64_t base = o * len * stride + in;
        int64_t best = base;
        for (int64_t j = 1; j < len && !std::isnan(v[best]); ++j) {
          const int64_t at = base + j * stride;
          if (std::isnan(v[at]) || v[at] > v[best]) best = at;
        }
        y[best] = 1.0;
      }
    }
  }
  Tensors out(1);
  out[0] = make_tensor(x.dtype, x.dims, y);
  return out;
}

namespace {

// Determinant of the n x n matrix `a` (row major, overwritten).
double determinant(double* a, int64_t n) {
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r) {
      if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
    }
    if (a[pivot * n + c] == 0.0) return 0.0;
    if (pivot != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
      det = -det;
    }
    const double d = a[c * n + c];
    det *= d;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / d;
      if (f == 0.0) continue;
      for (int64_t k = c + 1; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return det;
}

}  // namespace

Tensors op_det(const OpContext& ctx) {
  const Tensor& x = floating_input(ctx, "Det");
  const size_t rank = x.dims.size();
  if (rank < 2 || x.dims[rank - 1] != x.dims[rank - 2]) {
    fail(ErrorKind::input, "X of shape {} is not a batch of square matrices", shape_str(x.dims));
  }
  const int64_t n = x.dims[rank - 1];
  const std::vector<int64_t> dims(x.dims.begin(), x.dims.end() - 2);
  const int64_t batch = product(dims);
  std::vector<double> v = load_values<double>(x);
  std::vector<double> y(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) y[b] = determinant(v.data() + b * n * n, n);
  Tensors out(1);
  out[0] = make_tensor(x.dtype, dims, y);
  return out;
}

}  // namespace bnorm::eval
