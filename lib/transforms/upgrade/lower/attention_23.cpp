// Attention-23 (and 24, 25) below opset 23: scaled dot-product attention
// as MatMul, Softmax and MatMul, for the forms exporters write: 4-D or 3-D
// inputs, grouped-query heads, a KV cache, an attn_mask, is_causal,
// softcap and qk_matmul_output.
//
//   Before: Y, present_key?, present_value?, qk? = Attention(Q, K, V, attn_mask?, past_key?, past_value?)
//   After:  3-D X (B, S, H*E) -> Transpose(Reshape(X, [0, 0, H, -1]), [0, 2, 1, 3]) (B, H, S, E)
//           Kc = Concat(past_key, K, axis 2) -> present_key   (no past: Kc = K, present_key = Identity(K))
//           Vc = Concat(past_value, V, axis 2) -> present_value
//           grouped heads (Hq = g * Hkv): Kc, Vc each head repeated g times,
//             Reshape(Expand(Unsqueeze(Kc, [2]), [1, 1, g, 1, 1]), [0, Hq, -1, D])
//           S  = MatMul(Mul(Q, sqrt(scale)), Transpose(Mul(Kc, sqrt(scale)), [0, 1, 3, 2]))    -> qk (mode 0)
//           S  = Mul(Tanh(Div(S, softcap)), softcap)          softcap > 0                       -> qk (mode 1)
//           M  = Where(attn_mask, 0, -inf) (bool) or attn_mask (Q's type), plus C
//                (24, 25: a mask known to be shorter than the keys first padded: padded_mask)
//           C  = is_causal or a window: a constant [Sq, T], 0 where key j is allowed (j <= i + P),
//                -inf elsewhere; with nonpad_kv_seqlen Where(A, 0, -inf), A the bool of allowed keys
//                (attention_keys.cpp: key_bias)
//           S  = Add(S, M)                                                                        -> qk (mode 2)
//           Pr = Softmax(S, axis -1); with a mask, nonpad or a window, Where(IsInf(ReduceMax(M, [-1]), -inf only), 0, Pr)
//                                                                                                 -> qk (mode 3)
//           Y  = MatMul(Pr, Vc); 3-D: Reshape(Transpose(Y, [0, 2, 1, 3]), [0, 0, -1])
//
// Formula: Attention-23's (Changelog.md, with its errata: a row whose every
// key is masked is 0, which Softmax alone would make NaN, hence the Where;
// a causal row always keeps key 0, so without a mask no row is fully
// masked). bnorm's evaluator computes the op in float64 with one rounding
// per output; the ops round after each node, so the lowered model agrees
// within float rounding, as the other function bodies do (`--verify`
// judges it).
// Preconditions (each an Error naming the node): Q, K, V all 4-D or all 3-D
// (3-D: q_num_heads and kv_num_heads given); Q's element type known; the
// head counts known, and with grouped heads K's and V's head sizes too; D
// known unless `scale` is given; with is_causal, Sq, P and Skv known; an
// attn_mask bool or of Q's type (from version 24 one known to be shorter
// than the keys is padded as 24 pads it: padded_mask); with
// nonpad_kv_seqlen no past_key, and with it or a window Sq, P, T known; a target of
// opset 7 or later (with grouped heads 8: Expand; with a mask 10: IsInf).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// dims[i] of `value`, or an Error naming what needs it.
int64_t known_dim(const NormSite& s, const std::string& value, size_t i, const char* why) {
  const auto d = s.dims_of(value);
  if (!d || d->size() <= i || (*d)[i] < 0) {
    refuse(s, fmt::format("dim {} of '{}' is not known, and {}", i, value, why));
  }
  return (*d)[i];
}

// What the lowering reads of the node, checked.
struct Shape {
  bool three_d = false;
  int64_t hq = 0, hkv = 0;
  DType t = DType::undefined;
};

Shape read_shape(const NormSite& s, const onnx::NodeProto& n) {
  Shape sh;
  const auto rank = s.rank_of(n.input(0));
  if (!rank || (*rank != 3 && *rank != 4)) refuse(s, fmt::format("'{}' is not known to be 3-D or 4-D", n.input(0)));
  sh.three_d = *rank == 3;
  for (int i = 1; i < 3; ++i) {
    const auto r = s.rank_of(n.input(i));
    if (!r || *r != *rank) refuse(s, fmt::format("'{}' is not known to have Q's rank {}", n.input(i), *rank));
  }
  if (sh.three_d) {
    sh.hq = attr_int(n, "q_num_heads", 0);
    sh.hkv = attr_int(n, "kv_num_heads", 0);
    if (sh.hq <= 0 || sh.hkv <= 0) refuse(s, "3-D inputs need q_num_heads and kv_num_heads");
  } else {
    sh.hq = known_dim(s, n.input(0), 1, "the query heads must be known");
    sh.hkv = known_dim(s, n.input(1), 1, "the key/value heads must be known");
  }
  if (sh.hq % sh.hkv != 0) refuse(s, fmt::format("{} query heads are not a multiple of {} key/value heads", sh.hq, sh.hkv));
  sh.t = known_type(s, n.input(0), "input Q");
  return sh;
}

// Head size of Q, K or V (input `i`): dim 3 of 4-D, dim 2 / heads of 3-D.
int64_t head_size(const NormSite& s, const Shape& sh, int i, const char* why) {
  const std::string& x = s.node.input(i);
  return sh.three_d ? known_dim(s, x, 2, why) / (i == 0 ? sh.hq : sh.hkv) : known_dim(s, x, 3, why);
}

// (B, S, H*E) as (B, H, S, E).
std::string split_heads(Lowering& l, const std::string& x, int64_t heads, const std::string& what) {
  const std::string r = l.reshape(x, {0, 0, heads, -1}, what + "_heads");
  const std::string o = l.value(what + "_bhse");
  set_ints(l.s.add_before("Transpose", {r}, {o}), "perm", {0, 2, 1, 3});
  return o;
}

// Each of the Hkv heads of `x` (B, Hkv, T, E) repeated g times: (B, Hq, T, E).
std::string repeat_heads(Lowering& l, const std::string& x, int64_t g, int64_t hq, int64_t e, const std::string& what) {
  const std::string u = l.add("Unsqueeze", {x, l.s.add_int64s(l.s.stem() + "_" + what + "_axis", {2})}, what + "_1");
  const std::string ex =
      l.add("Expand", {u, l.s.add_int64s(l.s.stem() + "_" + what + "_times", {1, 1, g, 1, 1})}, what + "_g");
  return l.reshape(ex, {0, hq, -1, e}, what + "_repeated");
}

}  // namespace

// Attention-24 and 25 pad an attn_mask shorter than the keys with -inf;
// older versions and Add need it to broadcast. One known to be shorter (L
// of T keys) is padded here with False (bool) or -inf: Pad(mask, pads 0
// but T - L at the end of its last axis), the same hidden keys. One of
// unknown length is left: a shorter one does not broadcast at 23 or in
// Add, so it is refused when the model runs, never given another meaning.
std::string padded_mask(Lowering& l, const std::string& mask, const std::string& k, const std::string& past_k,
                        bool three_d) {
  NormSite& s = l.s;
  const auto d = s.dims_of(mask);
  const auto kd = s.dims_of(k);
  const int64_t last = d && !d->empty() ? d->back() : -1;
  const int64_t skv = kd && kd->size() > (three_d ? 1u : 2u) ? (*kd)[three_d ? 1 : 2] : -1;
  const auto pd = past_k.empty() ? std::nullopt : s.dims_of(past_k);
  const int64_t p = past_k.empty() ? 0 : (pd && pd->size() == 4 ? (*pd)[2] : -1);
  if (!(last > 1 && skv >= 0 && p >= 0 && last < p + skv)) return mask;
  const auto t = s.type_of(mask);
  if (!t) refuse(s, fmt::format("attn_mask '{}' must be padded and its type is not known", mask));
  std::vector<int64_t> pads(2 * d->size(), 0);
  pads.back() = p + skv - last;
  const std::string fill = l.scalar(*t, *t == DType::boolean ? 0.0 : -kInf, "mask_fill");
  const std::string out = l.add("Pad", {mask, s.add_int64s(s.stem() + "_mask_pads", pads), fill}, "mask_padded");
  s.new_types[out] = *t;
  s.new_ranks[out] = static_cast<int>(d->size());
  return out;
}

namespace {

// The additive bias M of attn_mask and the allowed keys, or "" when neither.
std::string bias(Lowering& l, const onnx::NodeProto& n, const Shape& sh, const std::string& k, const std::string& past_k) {
  NormSite& s = l.s;
  std::string m;
  const std::string mask = input_at(n, 3).empty() || s.version < 24
                               ? input_at(n, 3)
                               : padded_mask(l, input_at(n, 3), k, past_k, sh.three_d);
  if (!mask.empty()) {
    const auto mt = s.type_of(mask);
    if (!mt || (*mt != DType::boolean && *mt != sh.t)) {
      refuse(s, fmt::format("attn_mask '{}' is neither bool nor of Q's type", mask));
    }
    if (*mt == DType::boolean) {
      require_op(s, "Where", 9);
      m = l.add("Where", {mask, l.scalar(sh.t, 0, "zero"), l.scalar(sh.t, -kInf, "minus_inf")}, "mask_bias");
    } else {
      m = mask;
    }
  }
  // is_causal, nonpad_kv_seqlen (24) and the window (25, read there only, as eval does): the keys each query
  // may attend as one bias (attention_keys.cpp).
  const std::string nonpad = input_at(n, 6);
  const KeyRule rule{!nonpad.empty(), attr_int(n, "is_causal", 0) == 1,
                     s.version >= 25 ? attr_int(n, "left_window_size", -1) : -1,
                     s.version >= 25 ? attr_int(n, "right_window_size", -1) : -1};
  if (!rule.padding && !rule.causal && rule.left < 0 && rule.right < 0) return m;
  if (!nonpad.empty() && !past_k.empty()) refuse(s, "nonpad_kv_seqlen with past_key: the spec says not to use them together");
  const std::string b = key_bias(l, nonpad, key_lengths(s, nonpad.empty()), rule, sh.t);
  return m.empty() ? b : l.add("Add", {m, b}, "bias");
}

void refuse_unwritten(const NormSite& s, const onnx::NodeProto& n) {
  if (input_at(n, 4).empty() != input_at(n, 5).empty()) refuse(s, "past_key and past_value come together");
  const float cap = attr_float(n, "softcap", 0.0f);
  if (cap < 0 || std::isnan(cap)) refuse(s, fmt::format("softcap {} is negative", cap));
  for (const char* w : {"left_window_size", "right_window_size"}) {
    if (attr_int(n, w, -1) < -1) refuse(s, fmt::format("{} is {}; it must be -1 or at least 0", w, attr_int(n, w, -1)));
  }
  const int64_t mode = attr_int(n, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) refuse(s, fmt::format("qk_matmul_output_mode {} is not 0..3", mode));
}

}  // namespace

void lower_attention_23(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_broadcasting(s);
  refuse_unwritten(s, n);
  const Shape sh = read_shape(s, n);
  const std::string past_k = input_at(n, 4), past_v = input_at(n, 5);
  const int64_t g = sh.hq / sh.hkv;
  if (g > 1) require_op(s, "Expand", 8);
  const bool window = s.version >= 25 && (attr_int(n, "left_window_size", -1) >= 0 || attr_int(n, "right_window_size", -1) >= 0);
  const bool may_hide_rows = !input_at(n, 3).empty() || !input_at(n, 6).empty() || window;
  if (may_hide_rows) require_op(s, "IsInf", 10);
  const auto* scale_attr = find_attr(n, "scale");
  const double scale =
      scale_attr ? static_cast<double>(scale_attr->f()) : 1.0 / std::sqrt(double(head_size(s, sh, 0, "the default scale needs it")));
  const int64_t mode = attr_int(n, "qk_matmul_output_mode", 0);
  const std::string qk_out = output_at(n, 3);
  const auto emit = [&](const std::string& x, int64_t m) {
    if (!qk_out.empty() && mode == m) s.add_before("Identity", {x}, {qk_out});
  };

  Lowering l{s, opset};
  const std::string q = sh.three_d ? split_heads(l, n.input(0), sh.hq, "q") : n.input(0);
  const std::string k = sh.three_d ? split_heads(l, n.input(1), sh.hkv, "k") : n.input(1);
  const std::string v = sh.three_d ? split_heads(l, n.input(2), sh.hkv, "v") : n.input(2);
  // The keys and values the queries read: the cache, then the new ones.
  auto joined = [&](const std::string& past, const std::string& now, int out, const char* what) {
    const std::string present = output_at(n, out);
    if (past.empty()) {
      if (!present.empty()) l.add("Identity", {now}, what, present);
      return now;
    }
    const std::string o = present.empty() ? l.value(what) : present;
    set_int(s.add_before("Concat", {past, now}, {o}), "axis", 2);
    return o;
  };
  std::string keys = joined(past_k, k, 1, "present_key");
  std::string values = joined(past_v, v, 2, "present_value");
  if (g > 1) {
    keys = repeat_heads(l, keys, g, sh.hq, head_size(s, sh, 1, "grouped heads are repeated by it"), "keys");
    values = repeat_heads(l, values, g, sh.hq, head_size(s, sh, 2, "grouped heads are repeated by it"), "values");
  }
  const std::string root = l.scalar(sh.t, std::sqrt(scale), "sqrt_scale");
  const std::string qs = l.add("Mul", {q, root}, "q_scaled");
  const std::string ks = l.add("Mul", {keys, root}, "k_scaled");
  const std::string kt = l.value("k_transposed");
  set_ints(s.add_before("Transpose", {ks}, {kt}), "perm", {0, 1, 3, 2});
  std::string scores = l.add("MatMul", {qs, kt}, "scores");
  emit(scores, 0);
  const float cap = attr_float(n, "softcap", 0.0f);
  if (cap > 0) {
    const std::string c = l.scalar(sh.t, cap, "softcap");
    scores = l.add("Mul", {l.add("Tanh", {l.add("Div", {scores, c}, "scores_over_cap")}, "scores_tanh"), c},
                   "scores_capped");
  }
  emit(scores, 1);
  const std::string m = bias(l, n, sh, n.input(1), past_k);
  if (!m.empty()) scores = l.add("Add", {scores, m}, "scores_masked");
  emit(scores, 2);
  std::string probs = l.value("probs");
  set_int(s.add_before("Softmax", {scores}, {probs}), "axis", -1);
  if (may_hide_rows) {
    // A row the mask (or nonpad_kv_seqlen) hides entirely is 0 (Attention-23's errata), not Softmax's NaN.
    onnx::NodeProto& top = s.add_before("ReduceMax", {m, s.add_int64s(s.stem() + "_last_axis", {-1})},
                                        {l.value("bias_max")});
    set_int(top, "keepdims", 1);
    onnx::NodeProto& inf = s.add_before("IsInf", {top.output(0)}, {l.value("row_masked")});
    set_int(inf, "detect_positive", 0);
    probs = l.add("Where", {inf.output(0), l.scalar(sh.t, 0, "zero_p"), probs}, "probs_guarded");
  }
  emit(probs, 3);
  if (!sh.three_d) {
    l.add("MatMul", {probs, values}, "y", n.output(0));
    return;
  }
  const std::string y = l.add("MatMul", {probs, values}, "y_bhse");
  const std::string yt = l.value("y_bshe");
  set_ints(s.add_before("Transpose", {y}, {yt}), "perm", {0, 2, 1, 3});
  l.add("Reshape", {yt, s.add_int64s(s.stem() + "_y_shape", {0, 0, -1})}, "y", n.output(0));
}

}  // namespace bnorm::steps
