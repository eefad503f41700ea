// Matrix products: Gemm and MatMul.
//
//   Gemm    Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (2-D),
//           C broadcast to [M, N] (optional from 11; before 7 the
//           `broadcast` attribute is accepted and C broadcast either way).
//   MatMul  numpy matmul: batch dims broadcast, a 1-D first operand is a
//           row vector and a 1-D second operand a column vector (the added
//           axis is removed from the result).
// float/float16/bfloat16 compute in float, double in double: each element of
// A' * B' summed in k order, each product fused with its sum and rounded
// once (gemm_kernel.h), then Gemm's alpha product and beta * C sum. MatMul with
// one B for every batch multiplies all of A's rows at once (same sums).
#include <algorithm>
#include <type_traits>

#include "model/attrs.h"
#include "eval/ops/math/gemm_kernel.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "eval/ops/math/ops.h"
#include "kernels/activation.h"

namespace bnorm::eval {

namespace {

// The activation (or SiLU) after this product that the executor fused
// into it (OpContext::fused), applied to y in T with the activation
// kernels the nodes run: the same bits. Only for products of float or
// double, whose values are y's (the executor fuses no other).
template <typename T>
void activate_fused(const OpContext& ctx, DType out, std::vector<T>& y) {
  if (!ctx.fused) return;
  if (out != dtype_of<T>()) fail(ErrorKind::unsupported, "a {} product cannot apply the node after it", dtype_name(out));
  if constexpr (std::is_same_v<T, float>) {
    kernels::activation_f32(y.data(), y.data(), y.size(), *ctx.fused);
  } else {
    kernels::activation_f64(y.data(), y.data(), y.size(), *ctx.fused);
  }
}

}  // namespace

Tensors op_gemm(const OpContext& ctx) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  const Tensor* c = ctx.input(2);
  if (a.dims.size() != 2 || b.dims.size() != 2) {
    fail(ErrorKind::input, "inputs 'A' {} and 'B' {} must be matrices", shape_str(a.dims), shape_str(b.dims));
  }
  const bool ta = attr_int(*ctx.node, "transA", 0) != 0, tb = attr_int(*ctx.node, "transB", 0) != 0;
  const double alpha = attr_float(*ctx.node, "alpha", 1.0f), beta = attr_float(*ctx.node, "beta", 1.0f);
  const int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
  const int64_t kb = tb ? b.dims[1] : b.dims[0], n = tb ? b.dims[0] : b.dims[1];
  if (k != kb) fail(ErrorKind::input, "inputs 'A' {} and 'B' {} do not multiply", shape_str(a.dims), shape_str(b.dims));
  const std::vector<int64_t> out_dims{m, n};
  if (c) {
    const auto bc = broadcast_shapes(c->dims, out_dims);
    if (bc != out_dims) fail(ErrorKind::input, "input 'C' of shape {} does not broadcast to {}", shape_str(c->dims), shape_str(out_dims));
  }
  Tensors out(1);
  with_float_type(a.dtype, "input 'A'", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> ka, kb;
    const T* pa = values_as<T>(a, ka);
    const T* pb = values_as<T>(b, kb);
    // Transposed copies: of a constant operand (a layer's weights) made once
    // and kept by the runs' cache where there is one, else in storage of the
    // run's pool.
    auto kept = [&](bool trans, size_t i, const Tensor& t, const T* from) -> const Tensor* {
      if (!trans) return nullptr;
      return ctx.prepared(i, std::string("transposed ") + dtype_name(dtype_of<T>()), [&] {
        Tensor out = tensor_for_overwrite(dtype_of<T>(), {t.dims[1], t.dims[0]});
        transpose_into(from, t.dims[0], t.dims[1], out.data<T>());
        return out;
      });
    };
    const Tensor* kept_a = kept(ta, 0, a, pa);
    const Tensor* kept_b = kept(tb, 1, b, pb);
    PooledScratch sa(ta && !kept_a ? static_cast<size_t>(a.numel()) * sizeof(T) : 0),
        sb(tb && !kept_b ? static_cast<size_t>(b.numel()) * sizeof(T) : 0);
    if (ta) {
      if (!kept_a) transpose_into(pa, a.dims[0], a.dims[1], sa.as<T>());
      pa = kept_a ? kept_a->data<T>() : sa.as<T>();
    }
    if (tb) {
      if (!kept_b) transpose_into(pb, b.dims[0], b.dims[1], sb.as<T>());
      pb = kept_b ? kept_b->data<T>() : sb.as<T>();
    }
    std::vector<T> y(static_cast<size_t>(m * n));
    gemm<T>(pa, k, pb, n, y.data(), n, m, n, k, false);
    const T al = static_cast<T>(alpha), be = static_cast<T>(beta);
    for (T& v : y) v *= al;
    if (c && beta != 0) {
      const std::vector<T> vc = load_values<T>(*c);
      const auto st = broadcast_strides(c->dims, out_dims);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) y[i * n + j] += be * vc[i * st[0] + j * st[1]];
      }
    }
    activate_fused(ctx, a.dtype, y);
    out[0] = make_tensor(a.dtype, out_dims, y);
    return 0;
  });
  return out;
}

Tensors op_matmul(const OpContext& ctx) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  if (a.dims.empty() || b.dims.empty()) fail(ErrorKind::input, "MatMul operands must have rank 1 or more");
  std::vector<int64_t> da = a.dims, db = b.dims;
  const bool row = da.size() == 1, col = db.size() == 1;
  if (row) da.insert(da.begin(), 1);
  if (col) db.push_back(1);
  const int64_t m = da[da.size() - 2], k = da.back(), n = db.back();
  if (db[db.size() - 2] != k) {
    fail(ErrorKind::input, "inputs 'A' {} and 'B' {} do not multiply", shape_str(a.dims), shape_str(b.dims));
  }
  const std::vector<int64_t> ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2);
  const std::vector<int64_t> batch = broadcast_shapes(ba, bb);
  const auto sa = broadcast_strides(ba, batch), sb = broadcast_strides(bb, batch);
  std::vector<int64_t> out_dims = batch;
  if (!row) out_dims.push_back(m);
  if (!col) out_dims.push_back(n);
  const int64_t batches = product(batch);
  Tensors out(1);
  with_float_type(a.dtype, "input 'A'", [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> va = load_values<T>(a), vb = load_values<T>(b);
    std::vector<T> y(static_cast<size_t>(batches * m * n));
    if (bb.empty() || product(bb) == 1) {
      // One B for every batch, and A's batches back to back (A is never
      // broadcast when B has no batch dims): a single product of
      // batches * m rows, each summed as alone.
      gemm<T>(va.data(), k, vb.data(), n, y.data(), n, batches * m, n, k, false);
      activate_fused(ctx, a.dtype, y);
      out[0] = make_tensor(a.dtype, out_dims, y);
      return 0;
    }
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t oa = 0, ob = 0, rem = bi;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t i = rem % batch[d];
        rem /= batch[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      gemm<T>(va.data() + oa * m * k, k, vb.data() + ob * k * n, n, y.data() + bi * m * n, n, m, n, k, false);
    }
    activate_fused(ctx, a.dtype, y);
    out[0] = make_tensor(a.dtype, out_dims, y);
    return 0;
  });
  return out;
}

}  // namespace bnorm::eval
