// Attention-23, 24 and 25: scaled dot-product attention of Q, K and V, 3-D
// or 4-D (RotaryEmbedding-23 is in rotary.cpp; all registered here).
//
// Contract (Changelog.md, Attention-23/24/25, with their errata):
//   Q (B, Hq, Sq, D) or (B, Sq, Hq*D); K (B, Hkv, Skv, D) or (B, Skv, Hkv*D);
//   V (B, Hkv, Skv, Dv) or (B, Skv, Hkv*Dv). 3-D inputs need q_num_heads and
//   kv_num_heads. Hq is a multiple of Hkv and query head h reads key/value
//   head h / (Hq / Hkv) (GQA; MQA when Hkv = 1).
//   past_key (B, Hkv, P, D) and past_value (B, Hkv, P, Dv) come together; keys
//   and values are past ++ current along the sequence (T = P + Skv), which
//   present_key / present_value return (without a past: K and V, 4-D).
//   For query i of head h and key j (every step in float64):
//     s  = (Q_i * sqrt(scale)) . (K_j * sqrt(scale))    scale: 1/sqrt(D)
//     s  = softcap * tanh(s / softcap)                    when softcap > 0
//     s += bias(b, h, i, j)    attn_mask, is_causal, nonpad_kv_seqlen (24)
//                              and the window (25): bias.h
//     p  = softmax_j(s);   Y_i = sum_j p_j V_j
//   A row whose bias is -inf for every key (or that has no key, T = 0) has
//   p = 0, so Y_i = 0.
//   qk_matmul_output (B, Hq, Sq, T), type of Q: mode 0 the scaled QK, 1 after
//   softcap, 2 after the bias, 3 p.
// Each output element is rounded once to its type. softmax_precision names
// a float type no wider than float64, so it is validated and changes nothing.
#include <cmath>
#include <limits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/attention/bias.h"
#include "eval/ops/attention/ops.h"

namespace bnorm::eval {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

using Dims = AttentionDims;

// Heads of a 3-D input: `hidden` split into `heads` equal parts, else Error(input).
int64_t head_size(int64_t hidden, int64_t heads, const char* what) {
  if (hidden % heads != 0) {
    fail(ErrorKind::input, "{}'s hidden size {} is not a multiple of {} heads", what, hidden, heads);
  }
  return hidden / heads;
}

int64_t heads_attr(const OpContext& ctx, const char* name, bool required) {
  const int64_t n = attr_int(*ctx.node, name, 0);
  if (!find_attr(*ctx.node, name)) {
    if (required) fail(ErrorKind::input, "3-D inputs need the attribute '{}'", name);
    return 0;
  }
  if (n <= 0) fail(ErrorKind::input, "{} is {}, it must be positive", name, n);
  return n;
}

Dims attention_dims(const OpContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
  const size_t rank = q.dims.size();
  if ((rank != 3 && rank != 4) || k.dims.size() != rank || v.dims.size() != rank) {
    fail(ErrorKind::input, "Q, K and V have ranks {}, {} and {}; they must all be 3 or all be 4", rank,
         k.dims.size(), v.dims.size());
  }
  Dims d;
  d.three_d = rank == 3;
  const int64_t q_attr = heads_attr(ctx, "q_num_heads", d.three_d);
  const int64_t kv_attr = heads_attr(ctx, "kv_num_heads", d.three_d);
  d.batch = q.dims[0];
  if (d.three_d) {
    d.q_heads = q_attr;
    d.kv_heads = kv_attr;
    d.q_seq = q.dims[1];
    d.kv_seq = k.dims[1];
    d.head = head_size(q.dims[2], d.q_heads, "Q");
    if (head_size(k.dims[2], d.kv_heads, "K") != d.head || v.dims[1] != d.kv_seq) {
      fail(ErrorKind::input, "Q {}, K {} and V {} do not agree for {} query and {} key/value heads",
           shape_str(q.dims), shape_str(k.dims), shape_str(v.dims), d.q_heads, d.kv_heads);
    }
    d.v_head = head_size(v.dims[2], d.kv_heads, "V");
  } else {
    d.q_heads = q.dims[1];
    d.kv_heads = k.dims[1];
    d.q_seq = q.dims[2];
    d.kv_seq = k.dims[2];
    d.head = q.dims[3];
    d.v_head = v.dims[3];
    if (k.dims[3] != d.head || v.dims[1] != d.kv_heads || v.dims[2] != d.kv_seq) {
      fail(ErrorKind::input, "Q {}, K {} and V {} do not agree", shape_str(q.dims), shape_str(k.dims),
           shape_str(v.dims));
    }
    if ((q_attr && q_attr != d.q_heads) || (kv_attr && kv_attr != d.kv_heads)) {
      fail(ErrorKind::input, "q_num_heads {} and kv_num_heads {} contradict the 4-D inputs' {} and {} heads",
           q_attr, kv_attr, d.q_heads, d.kv_heads);
    }
  }
  if (k.dims[0] != d.batch || v.dims[0] != d.batch) fail(ErrorKind::input, "Q, K and V differ in batch size");
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    fail(ErrorKind::input, "{} query heads are not a multiple of {} key/value heads", d.q_heads, d.kv_heads);
  }
  return d;
}

// Reads past_key and past_value (both or neither) into d.past and d.total.
void check_past(const Tensor* pk, const Tensor* pv, const Tensor& k, const Tensor& v, Dims& d) {
  if (!pk != !pv) fail(ErrorKind::input, "past_key and past_value must be given together");
  d.past = pk ? (pk->dims.size() == 4 ? pk->dims[2] : -1) : 0;
  if (pk) {
    const std::vector<int64_t> want_k{d.batch, d.kv_heads, d.past, d.head};
    const std::vector<int64_t> want_v{d.batch, d.kv_heads, d.past, d.v_head};
    if (pk->dims != want_k || pv->dims != want_v) {
      fail(ErrorKind::input, "past_key {} and past_value {} must be {} and {}", shape_str(pk->dims),
           shape_str(pv->dims), shape_str(want_k), shape_str(want_v));
    }
    if (pk->dtype != k.dtype || pv->dtype != v.dtype) {
      fail(ErrorKind::input, "past_key and past_value must have the types of K and V");
    }
  }
  d.total = d.past + d.kv_seq;
}

// `t` (4-D, or 3-D (B, S, H*E)) as (B, H, S, E) values after `past` (B, H, P, E).
std::vector<double> sequence_of(const Tensor& t, const Tensor* past, const Dims& d, int64_t heads, int64_t size) {
  const std::vector<double> cur = load_values<double>(t);
  const std::vector<double> old = past ? load_values<double>(*past) : std::vector<double>{};
  const int64_t seq = d.three_d ? t.dims[1] : t.dims[2];
  const int64_t total = d.past + seq;
  std::vector<double> out(static_cast<size_t>(checked_buffer_numel({d.batch, heads, total, size}, 8, "keys")));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      double* dst = out.data() + (b * heads + h) * total * size;
      for (int64_t s = 0; s < d.past * size; ++s) dst[s] = old[(b * heads + h) * d.past * size + s];
      dst += d.past * size;
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t from = d.three_d ? ((b * seq + s) * heads + h) * size : ((b * heads + h) * seq + s) * size;
        for (int64_t e = 0; e < size; ++e) dst[s * size + e] = cur[from + e];
      }
    }
  }
  return out;
}

struct Settings {
  double root_scale = 0;  // sqrt(|scale|), applied to Q and K
  double sign = 1;        // of scale
  double softcap = 0;
  int64_t mode = 0;
};

Settings attention_settings(const OpContext& ctx, const Dims& d) {
  const onnx::NodeProto& n = *ctx.node;
  Settings s;
  // A negative scale keeps its meaning "factor applied to QK^T": its square
  // root is taken of the magnitude (the reference's sqrt would give NaN).
  const double scale = find_attr(n, "scale") ? attr_float(n, "scale", 0) : 1.0 / std::sqrt(double(d.head));
  s.root_scale = std::sqrt(std::fabs(scale));
  s.sign = scale < 0 ? -1.0 : 1.0;
  s.softcap = attr_float(n, "softcap", 0);
  // The reference skips a softcap <= 0, while c * tanh(s / c) with c < 0 is
  // the cap |c|: neither reading is clearly meant, so it is refused.
  if (s.softcap < 0 || std::isnan(s.softcap)) fail(ErrorKind::unsupported, "softcap {} (negative)", s.softcap);
  s.mode = attr_int(n, "qk_matmul_output_mode", 0);
  if (s.mode < 0 || s.mode > 3) fail(ErrorKind::input, "qk_matmul_output_mode is {}, it must be 0..3", s.mode);
  if (find_attr(n, "softmax_precision")) {
    const int64_t p = attr_int(n, "softmax_precision", 0);
    const auto t = static_cast<DType>(p);
    if (t != DType::float32 && t != DType::float64 && t != DType::float16 && t != DType::bfloat16) {
      fail(ErrorKind::input, "softmax_precision {} is not a floating type bnorm knows", p);
    }
  }
  return s;
}

// Softmax of s[0, n) in place; a fully masked row is zero.
void softmax_row(double* s, int64_t n, bool all_masked) {
  if (all_masked) {
    for (int64_t j = 0; j < n; ++j) s[j] = 0;
    return;
  }
  double m = kNegInf;
  for (int64_t j = 0; j < n; ++j) m = std::isnan(s[j]) || s[j] > m ? s[j] : m;
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - m));
  for (int64_t j = 0; j < n; ++j) s[j] /= sum;
}

struct Work {
  const Dims& d;
  const Settings& set;
  const std::vector<double>& q;     // (B, Hq, Sq, D)
  const std::vector<double>& keys;  // (B, Hkv, T, D)
  const std::vector<double>& vals;  // (B, Hkv, T, Dv)
  const AttentionBias& bias;
  std::vector<double>& y;   // Y in its output layout
  std::vector<double>& qk;  // (B, Hq, Sq, T), or empty
};

void attend(Work& w, int64_t b, int64_t h, int64_t i, std::vector<double>& s, std::vector<double>& bias) {
  const Dims& d = w.d;
  const int64_t kvh = h / (d.q_heads / d.kv_heads);
  const double* qi = w.q.data() + ((b * d.q_heads + h) * d.q_seq + i) * d.head;
  const double* kb = w.keys.data() + (b * d.kv_heads + kvh) * d.total * d.head;
  const double* vb = w.vals.data() + (b * d.kv_heads + kvh) * d.total * d.v_head;
  double* qk = w.qk.empty() ? nullptr : w.qk.data() + ((b * d.q_heads + h) * d.q_seq + i) * d.total;
  for (int64_t j = 0; j < d.total; ++j) {
    double dot = 0;
    for (int64_t e = 0; e < d.head; ++e) dot += (qi[e] * w.set.root_scale) * (kb[j * d.head + e] * w.set.root_scale);
    s[j] = dot * w.set.sign;
  }
  if (qk && w.set.mode == 0) std::copy(s.begin(), s.end(), qk);
  if (w.set.softcap > 0) {
    for (double& x : s) x = w.set.softcap * std::tanh(x / w.set.softcap);
  }
  if (qk && w.set.mode == 1) std::copy(s.begin(), s.end(), qk);
  const bool all_masked = w.bias.row(b, h, i, bias.data());
  for (int64_t j = 0; j < d.total; ++j) s[j] += bias[j];
  if (qk && w.set.mode == 2) std::copy(s.begin(), s.end(), qk);
  softmax_row(s.data(), d.total, all_masked);
  if (qk && w.set.mode == 3) std::copy(s.begin(), s.end(), qk);
  const int64_t at = d.three_d ? ((b * d.q_seq + i) * d.q_heads + h) * d.v_head
                               : ((b * d.q_heads + h) * d.q_seq + i) * d.v_head;
  for (int64_t e = 0; e < d.v_head; ++e) {
    double acc = 0;
    for (int64_t j = 0; j < d.total; ++j) acc += s[j] * vb[j * d.v_head + e];
    w.y[at + e] = acc;
  }
}

}  // namespace

Tensors op_attention(const OpContext& ctx) {
  const Tensor& q = ctx.required(0, "Q");
  const Tensor& k = ctx.required(1, "K");
  const Tensor& v = ctx.required(2, "V");
  if (!is_floating(q.dtype) || k.dtype != q.dtype || !is_floating(v.dtype)) {
    fail(ErrorKind::input, "Q and K must share a float type and V be a float type, not {}, {} and {}",
         dtype_name(q.dtype), dtype_name(k.dtype), dtype_name(v.dtype));
  }
  const size_t max_inputs = ctx.version >= 24 ? 7 : 6;
  if (ctx.input_count() > max_inputs || ctx.output_count() < 1 || ctx.output_count() > 4) {
    fail(ErrorKind::input, "Attention-{} has 3 to {} inputs and 1 to 4 outputs", ctx.version, max_inputs);
  }
  Dims d = attention_dims(ctx, q, k, v);
  check_past(ctx.input(4), ctx.input(5), k, v, d);
  const Settings set = attention_settings(ctx, d);
  const AttentionBias bias(ctx, d);
  Dims no_past = d;
  no_past.past = 0;
  const std::vector<double> qv = sequence_of(q, nullptr, no_past, d.q_heads, d.head);
  const std::vector<double> keys = sequence_of(k, ctx.input(4), d, d.kv_heads, d.head);
  const std::vector<double> vals = sequence_of(v, ctx.input(5), d, d.kv_heads, d.v_head);

  Tensors out(static_cast<size_t>(ctx.output_count()));
  out[0] = Tensor(q.dtype, d.three_d ? std::vector<int64_t>{d.batch, d.q_seq, d.q_heads * d.v_head}
                                     : std::vector<int64_t>{d.batch, d.q_heads, d.q_seq, d.v_head});
  std::vector<double> y(static_cast<size_t>(out[0].numel()));
  std::vector<double> qk;
  if (ctx.wants(3)) {
    out[3] = Tensor(q.dtype, {d.batch, d.q_heads, d.q_seq, d.total});
    qk.resize(static_cast<size_t>(out[3].numel()));
  }
  Work w{d, set, qv, keys, vals, bias, y, qk};
  std::vector<double> s(static_cast<size_t>(d.total)), row_bias(static_cast<size_t>(d.total));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      for (int64_t i = 0; i < d.q_seq; ++i) attend(w, b, h, i, s, row_bias);
    }
  }
  store_values(out[0], y.data());
  if (ctx.wants(3)) store_values(out[3], qk.data());
  if (ctx.wants(1)) out[1] = make_tensor(k.dtype, {d.batch, d.kv_heads, d.total, d.head}, keys);
  if (ctx.wants(2)) out[2] = make_tensor(v.dtype, {d.batch, d.kv_heads, d.total, d.v_head}, vals);
  return out;
}

}  // namespace bnorm::eval
