// RotaryEmbedding-23: rotary positional embedding (RoPE) of a 3-D or 4-D
// input (registered by add_attention_ops in attention.cpp).
//
// Contract (Changelog.md, RotaryEmbedding-23):
//   X (B, H, S, D), or (B, S, H*D) with the attribute num_heads; D even.
//   R = rotary_embedding_dim (0: D), even and at most D: the first R values
//   of each head rotate, the other D - R pass through.
//   cos_cache / sin_cache: with position_ids (B, S, int64) they are (M, R/2)
//   and row position_ids[b, s] is used; without, they are (B, S, R/2).
//   Each pair (x1, x2) is (x[k], x[k + R/2]), or (x[2k], x[2k + 1]) when
//   interleaved, for k < R/2:
//     x1' = cos_k * x1 - sin_k * x2,   x2' = sin_k * x1 + cos_k * x2
// Types float, float16, bfloat16 (the schema's T, for X and both caches);
// computed in float64, each element rounded once.
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/attention/ops.h"

namespace bnorm::eval {

namespace {

struct RopeDims {
  int64_t batch = 0, heads = 0, seq = 0, head = 0, rot = 0;
  bool three_d = false;
};

RopeDims rope_dims(const OpContext& ctx, const Tensor& x) {
  const size_t rank = x.dims.size();
  if (rank != 3 && rank != 4) fail(ErrorKind::input, "input has rank {}, it must be 3 or 4", rank);
  RopeDims d;
  d.three_d = rank == 3;
  const int64_t num_heads = attr_int(*ctx.node, "num_heads", 0);
  d.batch = x.dims[0];
  if (d.three_d) {
    if (num_heads <= 0) fail(ErrorKind::input, "a 3-D input needs a positive num_heads, not {}", num_heads);
    if (x.dims[2] % num_heads != 0) {
      fail(ErrorKind::input, "hidden size {} is not a multiple of num_heads {}", x.dims[2], num_heads);
    }
    d.heads = num_heads;
    d.seq = x.dims[1];
    d.head = x.dims[2] / num_heads;
  } else {
    if (num_heads != 0 && num_heads != x.dims[1]) {
      fail(ErrorKind::input, "num_heads {} contradicts the input's {} heads", num_heads, x.dims[1]);
    }
    d.heads = x.dims[1];
    d.seq = x.dims[2];
    d.head = x.dims[3];
  }
  if (d.head % 2 != 0) fail(ErrorKind::input, "head size {} is odd", d.head);
  d.rot = attr_int(*ctx.node, "rotary_embedding_dim", 0);
  if (d.rot == 0) d.rot = d.head;
  if (d.rot < 0 || d.rot > d.head || d.rot % 2 != 0) {
    fail(ErrorKind::input, "rotary_embedding_dim {} must be even and at most the head size {}", d.rot, d.head);
  }
  return d;
}

// For each (b, s), the offset of its cos/sin row in the caches' values.
std::vector<int64_t> cache_rows(const OpContext& ctx, const RopeDims& d, const Tensor& cos, const Tensor& sin) {
  const int64_t half = d.rot / 2;
  if (sin.dims != cos.dims) {
    fail(ErrorKind::input, "cos_cache {} and sin_cache {} differ in shape", shape_str(cos.dims), shape_str(sin.dims));
  }
  std::vector<int64_t> rows(static_cast<size_t>(d.batch * d.seq));
  const Tensor* ids = ctx.input(3);
  if (!ids) {
    if (cos.dims != std::vector<int64_t>{d.batch, d.seq, half}) {
      fail(ErrorKind::input, "without position_ids the caches must be {}, not {}",
           shape_str({d.batch, d.seq, half}), shape_str(cos.dims));
    }
    for (size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<int64_t>(r) * half;
    return rows;
  }
  if (ids->dtype != DType::int64 || ids->dims != std::vector<int64_t>{d.batch, d.seq}) {
    fail(ErrorKind::input, "position_ids must be int64 {}, not {} {}", shape_str({d.batch, d.seq}),
         dtype_name(ids->dtype), shape_str(ids->dims));
  }
  if (cos.dims.size() != 2 || cos.dims[1] != half) {
    fail(ErrorKind::input, "with position_ids the caches must be (max_position + 1, {}), not {}", half,
         shape_str(cos.dims));
  }
  const int64_t* p = ids->data<int64_t>();
  for (size_t r = 0; r < rows.size(); ++r) {
    // Negative positions are refused rather than counted from the end as
    // the reference's numpy indexing would: a position is a row number.
    if (p[r] < 0 || p[r] >= cos.dims[0]) {
      fail(ErrorKind::input, "position id {} is outside the caches' {} rows", p[r], cos.dims[0]);
    }
    rows[r] = p[r] * half;
  }
  return rows;
}

}  // namespace

Tensors op_rotary_embedding(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const Tensor& cos_t = ctx.required(1, "cos_cache");
  const Tensor& sin_t = ctx.required(2, "sin_cache");
  if (x.dtype != DType::float32 && x.dtype != DType::float16 && x.dtype != DType::bfloat16) {
    fail(ErrorKind::input, "input of type {}: RotaryEmbedding-23 takes float, float16 or bfloat16",
         dtype_name(x.dtype));
  }
  if (cos_t.dtype != x.dtype || sin_t.dtype != x.dtype) {
    fail(ErrorKind::input, "cos_cache and sin_cache must have the input's type {}", dtype_name(x.dtype));
  }
  const RopeDims d = rope_dims(ctx, x);
  const std::vector<int64_t> rows = cache_rows(ctx, d, cos_t, sin_t);
  const std::vector<double> cs = load_values<double>(cos_t), sn = load_values<double>(sin_t);
  std::vector<double> y = load_values<double>(x);
  const bool interleaved = attr_int(*ctx.node, "interleaved", 0) != 0;
  const int64_t half = d.rot / 2;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t s = 0; s < d.seq; ++s) {
      const double* c = cs.data() + rows[b * d.seq + s];
      const double* si = sn.data() + rows[b * d.seq + s];
      for (int64_t h = 0; h < d.heads; ++h) {
        double* v = y.data() + (d.three_d ? ((b * d.seq + s) * d.heads + h) : ((b * d.heads + h) * d.seq + s)) * d.head;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
          const double x1 = v[i1], x2 = v[i2];
          v[i1] = c[k] * x1 - si[k] * x2;
          v[i2] = si[k] * x1 + c[k] * x2;
        }
      }
    }
  }
  Tensors out(1);
  out[0] = make_tensor(x.dtype, x.dims, y);
  return out;
}

}  // namespace bnorm::eval
