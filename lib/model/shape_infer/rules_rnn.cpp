// Rules of the sequence-model ops: RNN, GRU, LSTM (layout from 14; Y, Y_h
// and LSTM's Y_c from hidden_size and the direction count), Attention
// (3-D inputs [batch, seq, heads * head_size] with q_num_heads and
// kv_num_heads, or 4-D [batch, heads, seq, head_size]; past keys and values
// add their sequence), RotaryEmbedding (its input's shape), and LinearAttention (3-D packed inputs, the state
// [batch, kv_num_heads, d_k, d_v] in past_state's type, else query's).
//
//   layout 0: X [seq, batch, input]  Y [seq, dirs, batch, hidden]  Y_h [dirs, batch, hidden]
//   layout 1: X [batch, seq, input]  Y [batch, seq, dirs, hidden]  Y_h [batch, dirs, hidden]
#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

void recurrent(NodeCtx& c) {
  const auto* x = c.shape(0);
  const bool layout1 = c.version >= 14 && attr_int(c.node, "layout", 0) != 0;
  const InferredDim dirs = InferredDim::of(attr_string(c.node, "direction", "forward") == "bidirectional" ? 2 : 1);
  const int64_t h = attr_int(c.node, "hidden_size", -1);
  const InferredDim hidden = h > 0 ? InferredDim::of(h) : InferredDim{};
  InferredDim seq, batch;
  if (x && x->size() == 3) {
    seq = (*x)[layout1 ? 1 : 0];
    batch = (*x)[layout1 ? 0 : 1];
  }
  const int32_t e = c.elem(0);
  if (layout1) c.set(0, e, std::vector<InferredDim>{batch, seq, dirs, hidden});
  else c.set(0, e, std::vector<InferredDim>{seq, dirs, batch, hidden});
  for (size_t o = 1; o < c.out.size(); ++o) {
    if (layout1) c.set(o, e, std::vector<InferredDim>{batch, dirs, hidden});
    else c.set(o, e, std::vector<InferredDim>{dirs, batch, hidden});
  }
}

InferredDim divided(const InferredDim& d, int64_t by) {
  return d.known() && by > 0 && d.value % by == 0 ? InferredDim::of(d.value / by) : InferredDim{};
}

InferredDim sum(const InferredDim& a, const InferredDim& b) {
  return a.known() && b.known() ? InferredDim::of(a.value + b.value) : InferredDim{};
}

// One of Q, K, V as [batch, heads, seq, head_size].
std::optional<std::vector<InferredDim>> heads_view(const std::vector<InferredDim>* s, int64_t heads) {
  if (!s) return std::nullopt;
  if (s->size() == 4) return *s;
  if (s->size() != 3 || heads <= 0) return std::nullopt;
  return std::vector<InferredDim>{(*s)[0], InferredDim::of(heads), (*s)[1], divided((*s)[2], heads)};
}

void attention(NodeCtx& c) {
  const int32_t e = c.elem(0);
  const auto q = heads_view(c.shape(0), attr_int(c.node, "q_num_heads", 0));
  const auto k = heads_view(c.shape(1), attr_int(c.node, "kv_num_heads", 0));
  const auto v = heads_view(c.shape(2), attr_int(c.node, "kv_num_heads", 0));
  if (!q || !k || !v) {
    c.set(0, e, c.shape(0) ? std::optional(std::vector<InferredDim>(c.shape(0)->size())) : std::nullopt);
    return;
  }
  const bool three_d = c.shape(0)->size() == 3;
  const InferredDim& batch = (*q)[0];
  const InferredDim& q_heads = (*q)[1];
  const InferredDim& q_seq = (*q)[2];
  const InferredDim& v_head = (*v)[3];
  if (three_d) c.set(0, e, std::vector<InferredDim>{batch, q_seq, q_heads.known() && v_head.known() ? InferredDim::of(q_heads.value * v_head.value) : InferredDim{}});
  else c.set(0, e, std::vector<InferredDim>{batch, q_heads, q_seq, v_head});
  InferredDim past = InferredDim::of(0);
  if (c.has_input(4)) {
    const auto* p = c.shape(4);
    past = p && p->size() == 4 ? (*p)[2] : InferredDim{};
  }
  const InferredDim total = sum(past, (*k)[2]);
  c.set(1, c.elem(1), std::vector<InferredDim>{batch, (*k)[1], total, (*k)[3]});
  c.set(2, c.elem(2), std::vector<InferredDim>{batch, (*v)[1], total, v_head});
  c.set(3, e, std::vector<InferredDim>{batch, q_heads, q_seq, total});
}

// query [B, T, Hq*dk], value [B, T, Hkv*dv] -> output [B, T, Hq*dv], present_state [B, Hkv, dk, dv].
void linear_attention(NodeCtx& c) {
  const auto* q = c.shape(0);
  const auto* v = c.shape(2);
  const int64_t hq = attr_int(c.node, "q_num_heads", 0), hkv = attr_int(c.node, "kv_num_heads", 0);
  InferredDim batch, seq, dk, dv;
  if (q && q->size() == 3) {
    batch = (*q)[0];
    seq = (*q)[1];
    dk = divided((*q)[2], hq);
  }
  if (v && v->size() == 3) dv = divided((*v)[2], hkv);
  const InferredDim width = dv.known() && hq > 0 ? InferredDim::of(hq * dv.value) : InferredDim{};
  c.set(0, c.elem(0), std::vector<InferredDim>{batch, seq, width});
  const int32_t state = c.has_input(3) ? c.elem(3) : c.elem(0);
  c.set(1, state, std::vector<InferredDim>{batch, hkv > 0 ? InferredDim::of(hkv) : InferredDim{}, dk, dv});
}

// ai.onnx.preview.FlexAttention: Y is (B, Hq, L, Ev) of Q's type, from Q
// (B, Hq, L, E) and V (B, Hkv, S, Ev).
void flex_attention(NodeCtx& c) {
  const auto* q = c.shape(0);
  const auto* v = c.shape(2);
  if (!q || q->size() != 4) {
    c.set(0, c.elem(0), std::vector<InferredDim>(4));
    return;
  }
  const InferredDim v_head = v && v->size() == 4 ? (*v)[3] : InferredDim{};
  c.set(0, c.elem(0), std::vector<InferredDim>{(*q)[0], (*q)[1], (*q)[2], v_head});
}

}  // namespace

const RuleTable& preview_rules() {
  static const RuleTable table = [] {
    RuleTable t;
    t["FlexAttention"] = flex_attention;
    return t;
  }();
  return table;
}

void add_rnn_rules(RuleTable& t) {
  t["RNN"] = t["GRU"] = t["LSTM"] = recurrent;
  t["Attention"] = attention;
  t["LinearAttention"] = linear_attention;
  t["RotaryEmbedding"] = [](NodeCtx& c) {
    c.set(0, c.elem(0), c.shape(0) ? std::optional(*c.shape(0)) : std::nullopt);
  };
}

}  // namespace bnorm::shape_infer
