// Attention-23 (and 24, 25) below opset 23: scaled dot-product attention
// as MatMul, Softmax and MatMul, for the decoder forms exporters write
// (4-D Q, K, V of as many query heads as key/value heads, an optional KV
// cache, causal or not).
//
//   Before: Y, present_key?, present_value? = Attention(Q, K, V, , past_key?, past_value?)
//           is_causal, scale (default 1 / sqrt(D), D = Q's last dim)
//   After:  Kc = Concat(past_key, K, axis 2)    -> present_key    (no past: Kc = K, present_key = Identity(K))
//           Vc = Concat(past_value, V, axis 2)  -> present_value
//           S  = MatMul(Mul(Q, sqrt(scale)), Transpose(Mul(Kc, sqrt(scale)), [0, 1, 3, 2]))
//           S  = Add(S, M)    is_causal: M [Sq, T] a constant, 0 where j <= i + P, -inf elsewhere
//           Y  = MatMul(Softmax(S, axis -1), Vc)
//
// Formula: Attention-23's (Changelog.md; sqrt(scale) on both Q and K as its
// function body). bnorm's evaluator computes the op in float64 with one
// rounding per output; the ops round after each node, so the lowered model
// agrees within float rounding, as the other function bodies do (`--verify`
// judges it). A causal row always keeps key 0 (0 <= i + P), so no row is
// fully masked and Softmax never sees a row of -inf.
// Preconditions (each an Error naming the node): Q, K, V 4-D with their
// head counts known and equal (3-D inputs and grouped-query heads would
// need Reshape/Expand chains, not written); Q's element type known; D known
// unless `scale` is given; with is_causal, Sq, P and Skv known; no
// attn_mask (a row it masks fully is 0 in Attention and NaN in Softmax), no
// qk_matmul_output, softcap 0, no nonpad_kv_seqlen, window sizes -1
// (versions 24, 25); a target of opset 7 or later.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {

std::string at(const onnx::NodeProto& n, int i, bool input) {
  const auto& v = input ? n.input() : n.output();
  return i < v.size() ? v.Get(i) : std::string();
}

// dims[i] of `value`, or an Error naming what needs it.
int64_t known_dim(const NormSite& s, const std::string& value, size_t i, const char* why) {
  const auto d = s.dims_of(value);
  if (!d || d->size() <= i || (*d)[i] < 0) {
    refuse(s, fmt::format("dim {} of '{}' is not known, and {}", i, value, why));
  }
  return (*d)[i];
}

}  // namespace

void lower_attention_23(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_broadcasting(s);
  const std::string q = at(n, 0, true), k = at(n, 1, true), v = at(n, 2, true);
  const std::string past_k = at(n, 4, true), past_v = at(n, 5, true);
  if (!at(n, 3, true).empty()) {
    refuse(s, "attn_mask is not written as other ops: a row it masks fully is 0 in Attention and NaN in Softmax");
  }
  if (!at(n, 6, true).empty()) refuse(s, "nonpad_kv_seqlen (version 24) has no form in older ops");
  if (!at(n, 3, false).empty()) refuse(s, "its qk_matmul_output is not written as other ops");
  if (past_k.empty() != past_v.empty()) refuse(s, "past_key and past_value come together");
  if (attr_float(n, "softcap", 0.0f) != 0.0f) refuse(s, "softcap is not written as other ops");
  for (const char* w : {"left_window_size", "right_window_size"}) {
    if (attr_int(n, w, -1) != -1) refuse(s, fmt::format("{} (version 25) is not written as other ops", w));
  }
  for (const std::string& x : {q, k, v}) {
    const auto r = s.rank_of(x);
    if (!r || *r != 4) refuse(s, fmt::format("'{}' is not known to be 4-D (3-D inputs are not written as other ops)", x));
  }
  const int64_t hq = known_dim(s, q, 1, "the heads of Q and K must be known to be equal");
  const int64_t hkv = known_dim(s, k, 1, "the heads of Q and K must be known to be equal");
  if (hq != hkv) refuse(s, fmt::format("{} query heads read {} key/value heads (grouped-query attention is not written as other ops)", hq, hkv));
  const DType t = known_type(s, q, "input Q");
  const auto* scale_attr = find_attr(n, "scale");
  const double scale = scale_attr ? static_cast<double>(scale_attr->f())
                                  : 1.0 / std::sqrt(static_cast<double>(known_dim(s, q, 3, "the default scale needs it")));
  const bool causal = attr_int(n, "is_causal", 0) == 1;

  Lowering l{s, opset};
  // The keys and values the queries read: the cache, then the new ones.
  auto joined = [&](const std::string& past, const std::string& now, int out, const char* what) {
    const std::string present = at(n, out, false);
    if (past.empty()) {
      if (!present.empty()) l.add("Identity", {now}, what, present);
      return now;
    }
    const std::string o = present.empty() ? l.value(what) : present;
    set_int(s.add_before("Concat", {past, now}, {o}), "axis", 2);
    return o;
  };
  const std::string keys = joined(past_k, k, 1, "present_key");
  const std::string values = joined(past_v, v, 2, "present_value");
  const std::string root = l.scalar(t, std::sqrt(scale), "sqrt_scale");
  const std::string qs = l.add("Mul", {q, root}, "q_scaled");
  const std::string ks = l.add("Mul", {keys, root}, "k_scaled");
  const std::string kt = l.value("k_transposed");
  set_ints(s.add_before("Transpose", {ks}, {kt}), "perm", {0, 1, 3, 2});
  std::string scores = l.add("MatMul", {qs, kt}, "scores");
  if (causal) {
    const int64_t sq = known_dim(s, q, 2, "is_causal needs it for its mask");
    const int64_t skv = known_dim(s, k, 2, "is_causal needs it for its mask");
    const int64_t p = past_k.empty() ? 0 : known_dim(s, past_k, 2, "is_causal needs it for its mask");
    const int64_t total = p + skv;
    std::vector<double> m(static_cast<size_t>(sq * total));
    for (int64_t i = 0; i < sq; ++i) {
      for (int64_t j = 0; j < total; ++j) {
        m[static_cast<size_t>(i * total + j)] = j <= i + p ? 0.0 : -std::numeric_limits<double>::infinity();
      }
    }
    Tensor mask = Tensor::from_f64(t, {sq, total}, m);
    mask.name = l.value("causal_mask");
    s.initializers.push_back(to_proto(mask));
    scores = l.add("Add", {scores, mask.name}, "scores_masked");
  }
  const std::string probs = l.value("probs");
  set_int(s.add_before("Softmax", {scores}, {probs}), "axis", -1);
  l.add("MatMul", {probs, values}, "y", n.output(0));
}

}  // namespace bnorm::steps
