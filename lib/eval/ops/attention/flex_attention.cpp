// ai.onnx.preview.FlexAttention-1: scaled dot-product attention of rank-4
// Q, K and V with optional score_mod and prob_mod subgraphs.
//
// Contract (Changelog.md, ai.onnx.preview.FlexAttention-1):
//   Q (B, Hq, L, E), K (B, Hkv, S, E), V (B, Hkv, S, Ev), all of one type T1
//   (bfloat16, float16, float, double); Y (B, Hq, L, Ev) of type T1. Hq is
//   a multiple of Hkv and query head h reads key/value head h / (Hq / Hkv).
//   scale defaults to 1/sqrt(E). softmax_precision (P) is float for T1 other
//   than double, double for double, or the float type the attribute names.
//     scores = (Q . K^T) * scale                      (B, Hq, L, S), type P
//     scores = score_mod(scores)                      when given
//     probs  = Softmax(scores, axis = -1)             type P
//     probs  = prob_mod(probs)                        when given
//     Y      = probs . V                              type T1
//   Each modifier takes and returns one tensor of type P and shape
//   (B, Hq, L, S); anything else is Error(input).
// Rounding (decision, docs/semantics.md): every product and sum runs in
// float64 from the exact values; the scores and the probabilities are each
// rounded once to P (the tensors the subgraphs see, or would see), Y once
// to T1. The softmax is the Softmax op's: a row whose scores are all -inf
// gives NaN, as the spec's formula does.
#include <cmath>
#include <string>
#include <vector>

#include "eval/ops/attention/ops.h"
#include "eval/run/numeric.h"
#include "model/attrs.h"

namespace bnorm::eval {

namespace {

struct FlexDims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, head = 0, v_head = 0;
};

FlexDims flex_dims(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dims.size() != 4 || k.dims.size() != 4 || v.dims.size() != 4) {
    fail(ErrorKind::input, "Q, K and V have ranks {}, {} and {}; FlexAttention takes rank 4", q.dims.size(),
         k.dims.size(), v.dims.size());
  }
  if (k.dtype != q.dtype || v.dtype != q.dtype) {
    fail(ErrorKind::input, "Q, K and V have types {}, {} and {}; they must be one type", dtype_name(q.dtype),
         dtype_name(k.dtype), dtype_name(v.dtype));
  }
  if (!is_floating(q.dtype)) fail(ErrorKind::input, "Q of type {} is not a float type", dtype_name(q.dtype));
  const FlexDims d{q.dims[0], q.dims[1], k.dims[1], q.dims[2], k.dims[2], q.dims[3], v.dims[3]};
  if (k.dims[0] != d.batch || v.dims[0] != d.batch || v.dims[1] != d.kv_heads || v.dims[2] != d.kv_seq ||
      k.dims[3] != d.head) {
    fail(ErrorKind::input, "Q {}, K {} and V {} do not agree", shape_str(q.dims), shape_str(k.dims),
         shape_str(v.dims));
  }
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    fail(ErrorKind::input, "{} query heads are not a multiple of {} key/value heads", d.q_heads, d.kv_heads);
  }
  return d;
}

DType softmax_type(const OpContext& ctx, DType t1) {
  const int64_t p = attr_int(*ctx.node, "softmax_precision", 0);
  if (p == 0) return t1 == DType::float64 ? DType::float64 : DType::float32;
  const auto t = static_cast<DType>(p);
  if (!is_floating(t)) fail(ErrorKind::input, "softmax_precision {} is not a float type", p);
  return t;
}

// Runs the modifier `attr` (when the node has it) on `x`: its one output,
// checked to keep x's type and shape.
Tensor modified(const OpContext& ctx, const char* attr, Tensor x) {
  const onnx::AttributeProto* a = find_attr(*ctx.node, attr);
  if (!a) return x;
  if (!a->has_g()) fail(ErrorKind::input, "attribute '{}' is not a graph", attr);
  if (!ctx.subgraph) fail(ErrorKind::unsupported, "'{}' cannot run here", attr);
  const std::unique_ptr<Subgraph> body = ctx.subgraph(a->g(), attr);
  if (body->input_count() != 1 || body->output_count() != 1) {
    fail(ErrorKind::input, "'{}' has {} inputs and {} outputs; it must have one of each", attr,
         body->input_count(), body->output_count());
  }
  const DType t = x.dtype;
  const std::vector<int64_t> dims = x.dims;
  std::vector<Value> in;
  in.push_back(Value::of(std::move(x)));
  std::vector<Value> out = body->run(std::move(in), attr);
  if (out.size() != 1 || !out[0].is_tensor()) fail(ErrorKind::input, "'{}' must return one tensor", attr);
  Tensor y = std::move(out[0].tensor);
  if (y.dtype != t || y.dims != dims) {
    fail(ErrorKind::input, "'{}' returned {} {}; it must keep its input's {} {}", attr, dtype_name(y.dtype),
         shape_str(y.dims), dtype_name(t), shape_str(dims));
  }
  return y;
}

// Softmax over each row of `n` values, in float64.
std::vector<double> softmax_rows(const std::vector<double>& s, int64_t n) {
  std::vector<double> p(s.size());
  for (size_t r = 0; n > 0 && r < s.size(); r += static_cast<size_t>(n)) {
    double m = s[r];
    for (int64_t j = 1; j < n; ++j) m = std::fmax(m, s[r + j]);
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += p[r + j] = std::exp(s[r + j] - m);
    for (int64_t j = 0; j < n; ++j) p[r + j] /= sum;
  }
  return p;
}

}  // namespace

Tensors op_flex_attention(const OpContext& ctx) {
  const Tensor& q = ctx.required(0, "Q");
  const Tensor& k = ctx.required(1, "K");
  const Tensor& v = ctx.required(2, "V");
  const FlexDims d = flex_dims(q, k, v);
  const DType p_type = softmax_type(ctx, q.dtype);
  const double scale = find_attr(*ctx.node, "scale") ? attr_float(*ctx.node, "scale", 1.0f)
                                                      : 1.0 / std::sqrt(static_cast<double>(d.head));
  const std::vector<int64_t> score_dims{d.batch, d.q_heads, d.q_seq, d.kv_seq};
  checked_buffer_numel(score_dims, 8, "FlexAttention's scores");
  const std::vector<double> vq = load_values<double>(q), vk = load_values<double>(k), vv = load_values<double>(v);
  const int64_t group = d.q_heads / d.kv_heads;
  std::vector<double> s(static_cast<size_t>(product(score_dims)));
  size_t at = 0;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const double* kh = vk.data() + (b * d.kv_heads + h / group) * d.kv_seq * d.head;
      for (int64_t i = 0; i < d.q_seq; ++i) {
        const double* qi = vq.data() + ((b * d.q_heads + h) * d.q_seq + i) * d.head;
        for (int64_t j = 0; j < d.kv_seq; ++j, ++at) {
          double dot = 0;
          for (int64_t e = 0; e < d.head; ++e) dot += qi[e] * kh[j * d.head + e];
          s[at] = dot * scale;
        }
      }
    }
  }
  const Tensor scores = modified(ctx, "score_mod", Tensor::from_f64(p_type, score_dims, s));
  const Tensor probs = modified(ctx, "prob_mod",
                                Tensor::from_f64(p_type, score_dims, softmax_rows(scores.to_f64(), d.kv_seq)));
  const std::vector<double> p = probs.to_f64();
  const std::vector<int64_t> y_dims{d.batch, d.q_heads, d.q_seq, d.v_head};
  std::vector<double> y(static_cast<size_t>(checked_buffer_numel(y_dims, 8, "FlexAttention's output")));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const double* vh = vv.data() + (b * d.kv_heads + h / group) * d.kv_seq * d.v_head;
      for (int64_t i = 0; i < d.q_seq; ++i) {
        const double* pi = p.data() + ((b * d.q_heads + h) * d.q_seq + i) * d.kv_seq;
        double* yi = y.data() + ((b * d.q_heads + h) * d.q_seq + i) * d.v_head;
        for (int64_t j = 0; j < d.kv_seq; ++j) {
          for (int64_t e = 0; e < d.v_head; ++e) yi[e] += pi[j] * vh[j * d.v_head + e];
        }
      }
    }
  }
  return one_tensor(Tensor::from_f64(q.dtype, y_dims, y));
}

}  // namespace bnorm::eval
