// LinearAttention-27: causal linear attention as a recurrence over the sequence, one state matrix per key/value
// head, for prefill (T > 1) and decode (T = 1) alike.
//
// Contract (Changelog.md, LinearAttention-27; docs/semantics.md for the points the text leaves open):
//   query (B, T, Hq*dk), key (B, T, Hkv*dk), value (B, T, Hkv*dv): heads packed in the last axis,
//   q_num_heads = Hq and kv_num_heads = Hkv both required, Hq a positive multiple of Hkv; query head h reads
//   the state of key/value head h / (Hq / Hkv) (GQA; MQA when Hkv = 1).
//   past_state (B, Hkv, dk, dv), zeros when absent; present_state is the state after the last token, of
//   past_state's type (S), or of query's when there is no past_state (the function body's CastLike).
//   decay (B, T, Hkv*dk) per key dimension or (B, T, Hkv) per head, in log space, read by the gated rules;
//   beta (B, T, Hkv) or (B, T, 1), read by the delta rules. An input the rule does not use is not read.
//   For each token t and key/value head, with S the (dk, dv) state, g = exp(decay_t) along dk:
//     linear       S = S + k (x) v
//     gated        S = g * S + k (x) v
//     delta        S = S + beta * k (x) (v - S^T k)
//     gated_delta  S = g * S;  S = S + beta * k (x) (v - S^T k)
//     o_t = scale * q_t^T S            (after the update; scale 0 means 1/sqrt(dk))
//   output (B, T, Hq*dv), heads packed as in query. chunk_size is a speed hint: it changes nothing here.
// Every step in float64 (state included); each output element is rounded once to its type.
// Preconditions, each refused with a message (Error(input)): the types the schema allows (T, S: float,
// float16, bfloat16; key, value, decay, beta of query's type), rank-3 inputs of one batch and length, sizes
// divisible by the head counts, the shapes above, a known update_rule.
#include <algorithm>
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/attention/ops.h"

namespace bnorm::eval {

namespace {

enum class Rule { linear, gated, delta, gated_delta };

struct Dims {
  int64_t batch = 0, seq = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
};

bool schema_float(DType t) { return t == DType::float32 || t == DType::float16 || t == DType::bfloat16; }

int64_t required_heads(const OpContext& ctx, const char* name) {
  if (!find_attr(*ctx.node, name)) fail(ErrorKind::input, "the attribute '{}' is required", name);
  const int64_t n = attr_int(*ctx.node, name, 0);
  if (n <= 0) fail(ErrorKind::input, "{} is {}, it must be positive", name, n);
  return n;
}

Rule read_rule(const onnx::NodeProto& n) {
  const std::string r = attr_string(n, "update_rule", "gated_delta");
  if (r == "linear") return Rule::linear;
  if (r == "gated") return Rule::gated;
  if (r == "delta") return Rule::delta;
  if (r == "gated_delta") return Rule::gated_delta;
  fail(ErrorKind::input, "update_rule '{}' is not one of linear, gated, delta, gated_delta", r);
}

int64_t per_head(int64_t hidden, int64_t heads, const char* what) {
  if (hidden % heads != 0) {
    fail(ErrorKind::input, "{}'s last dimension {} is not a multiple of {} heads", what, hidden, heads);
  }
  return hidden / heads;
}

Dims read_dims(const OpContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dims.size() != 3 || k.dims.size() != 3 || v.dims.size() != 3) {
    fail(ErrorKind::input, "query {}, key {} and value {} must be 3-D (batch, sequence, heads * head size)",
         shape_str(q.dims), shape_str(k.dims), shape_str(v.dims));
  }
  Dims d;
  d.q_heads = required_heads(ctx, "q_num_heads");
  d.kv_heads = required_heads(ctx, "kv_num_heads");
  if (d.q_heads % d.kv_heads != 0) {
    fail(ErrorKind::input, "q_num_heads {} is not a multiple of kv_num_heads {}", d.q_heads, d.kv_heads);
  }
  d.batch = q.dims[0];
  d.seq = q.dims[1];
  if (k.dims[0] != d.batch || v.dims[0] != d.batch || k.dims[1] != d.seq || v.dims[1] != d.seq) {
    fail(ErrorKind::input, "query {}, key {} and value {} differ in batch or sequence length", shape_str(q.dims),
         shape_str(k.dims), shape_str(v.dims));
  }
  d.dk = per_head(q.dims[2], d.q_heads, "query");
  if (k.dims[2] != d.kv_heads * d.dk) {
    fail(ErrorKind::input, "key's last dimension is {}, not kv_num_heads {} * head size {} (from query)",
         k.dims[2], d.kv_heads, d.dk);
  }
  d.dv = per_head(v.dims[2], d.kv_heads, "value");
  return d;
}

// decay or beta: (B, T, n) for one of the sizes allowed; returns the size found.
int64_t gate_width(const Tensor* t, const char* what, const Dims& d, int64_t a, int64_t b, DType type) {
  if (!t) fail(ErrorKind::input, "update_rule needs the input '{}'", what);
  if (t->dtype != type) fail(ErrorKind::input, "{} must have query's type {}", what, dtype_name(type));
  if (t->dims.size() != 3 || t->dims[0] != d.batch || t->dims[1] != d.seq || (t->dims[2] != a && t->dims[2] != b)) {
    fail(ErrorKind::input, "{} is {}, it must be {} or {}", what, shape_str(t->dims),
         shape_str({d.batch, d.seq, a}), shape_str({d.batch, d.seq, b}));
  }
  return t->dims[2];
}

struct Inputs {
  std::vector<double> q, k, v, decay, beta;
  int64_t decay_width = 0, beta_width = 0;  // per token: Hkv*dk or Hkv; Hkv or 1
  bool gated = false, delta = false;
  double scale = 0;
};

// One key/value head of batch b through the whole sequence: updates `s` (dk, dv) in place and writes the
// outputs of its query heads into y (B, T, Hq*dv).
void run_head(const Dims& d, const Inputs& in, int64_t b, int64_t kvh, double* s, std::vector<double>& y) {
  const int64_t group = d.q_heads / d.kv_heads;
  std::vector<double> delta(static_cast<size_t>(d.dv));
  for (int64_t t = 0; t < d.seq; ++t) {
    const int64_t bt = b * d.seq + t;
    const double* k = in.k.data() + (bt * d.kv_heads + kvh) * d.dk;
    const double* v = in.v.data() + (bt * d.kv_heads + kvh) * d.dv;
    if (in.gated) {
      const bool per_dim = in.decay_width == d.kv_heads * d.dk;
      const double* g = in.decay.data() + bt * in.decay_width + (per_dim ? kvh * d.dk : kvh);
      for (int64_t i = 0; i < d.dk; ++i) {
        const double f = std::exp(g[per_dim ? i : 0]);
        for (int64_t j = 0; j < d.dv; ++j) s[i * d.dv + j] *= f;
      }
    }
    if (in.delta) {
      const double beta = in.beta[bt * in.beta_width + (in.beta_width == 1 ? 0 : kvh)];
      for (int64_t j = 0; j < d.dv; ++j) {
        double read = 0;
        for (int64_t i = 0; i < d.dk; ++i) read += s[i * d.dv + j] * k[i];
        delta[j] = beta * (v[j] - read);
      }
    } else {
      std::copy(v, v + d.dv, delta.begin());
    }
    for (int64_t i = 0; i < d.dk; ++i) {
      for (int64_t j = 0; j < d.dv; ++j) s[i * d.dv + j] += k[i] * delta[j];
    }
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      const double* q = in.q.data() + (bt * d.q_heads + h) * d.dk;
      double* o = y.data() + (bt * d.q_heads + h) * d.dv;
      for (int64_t j = 0; j < d.dv; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < d.dk; ++i) acc += q[i] * s[i * d.dv + j];
        o[j] = in.scale * acc;
      }
    }
  }
}

}  // namespace

Tensors op_linear_attention(const OpContext& ctx) {
  if (ctx.input_count() > 6 || ctx.output_count() < 1 || ctx.output_count() > 2) {
    fail(ErrorKind::input, "LinearAttention-27 has 3 to 6 inputs and 1 or 2 outputs");
  }
  const Tensor& q = ctx.required(0, "query");
  const Tensor& k = ctx.required(1, "key");
  const Tensor& v = ctx.required(2, "value");
  if (!schema_float(q.dtype) || k.dtype != q.dtype || v.dtype != q.dtype) {
    fail(ErrorKind::input, "query, key and value must share one of float, float16, bfloat16, not {}, {} and {}",
         dtype_name(q.dtype), dtype_name(k.dtype), dtype_name(v.dtype));
  }
  const Dims d = read_dims(ctx, q, k, v);
  const Rule rule = read_rule(*ctx.node);
  Inputs in;
  in.gated = rule == Rule::gated || rule == Rule::gated_delta;
  in.delta = rule == Rule::delta || rule == Rule::gated_delta;
  if (in.gated) {
    in.decay_width = gate_width(ctx.input(4), "decay", d, d.kv_heads * d.dk, d.kv_heads, q.dtype);
    in.decay = load_values<double>(*ctx.input(4));
  }
  if (in.delta) {
    in.beta_width = gate_width(ctx.input(5), "beta", d, d.kv_heads, 1, q.dtype);
    in.beta = load_values<double>(*ctx.input(5));
  }
  const double scale = attr_float(*ctx.node, "scale", 0.0f);
  in.scale = scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(d.dk));

  const std::vector<int64_t> state_dims{d.batch, d.kv_heads, d.dk, d.dv};
  std::vector<double> state(static_cast<size_t>(checked_buffer_numel(state_dims, 8, "LinearAttention's state")));
  const Tensor* past = ctx.input(3);
  if (past) {
    if (!schema_float(past->dtype)) {
      fail(ErrorKind::input, "past_state of type {}: the state takes float, float16 or bfloat16",
           dtype_name(past->dtype));
    }
    if (past->dims != state_dims) {
      fail(ErrorKind::input, "past_state is {}, it must be {} (batch, kv_num_heads, key head size, value head size)",
           shape_str(past->dims), shape_str(state_dims));
    }
    state = load_values<double>(*past);
  }
  in.q = load_values<double>(q);
  in.k = load_values<double>(k);
  in.v = load_values<double>(v);

  Tensors out(static_cast<size_t>(ctx.output_count()));
  out[0] = Tensor(q.dtype, {d.batch, d.seq, d.q_heads * d.dv});
  std::vector<double> y(static_cast<size_t>(out[0].numel()));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.kv_heads; ++h) {
      run_head(d, in, b, h, state.data() + (b * d.kv_heads + h) * d.dk * d.dv, y);
    }
  }
  store_values(out[0], y.data());
  if (ctx.wants(1)) out[1] = make_tensor(past ? past->dtype : q.dtype, state_dims, state);
  return out;
}

}  // namespace bnorm::eval
