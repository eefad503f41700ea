// Attention 23 <-> 24: input 6, nonpad_kv_seqlen (an external KV cache's
// count of valid keys per batch), was added.
//
//   Attention-23: Attention(Q, K, V, attn_mask?, past_key?, past_value?)                    -> Y, ...
//   Attention-24: Attention(Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?) -> Y, ...
//
// Without nonpad_kv_seqlen, version 24 means what 23 means (the causal
// offset is past_sequence_length, or 0 without past_key, in both texts; the
// Changelog's errata for fully-masked rows apply to both in place).
// Up: nothing changes. Down: nonpad_kv_seqlen (a non-empty input 6) becomes
// part of attn_mask (lower/attention_keys.cpp): a bool A of the keys each
// query may attend, the padding hidden and, with is_causal, the frontier
// offset by nonpad - Sq; then
//   attn_mask absent: A;  bool: And(attn_mask, A);  Q's type: Add(attn_mask, Where(A, 0, -inf))
// and is_causal is removed (A holds it). A row A hides entirely is zero at
// 23 as at 24 (the errata). Preconditions: no past_key (the spec says not
// to use both; the evaluator refuses it), Sq and T known. An empty
// trailing input 6 is removed. An attn_mask known to be shorter than the
// keys is padded with False or -inf, as 24 pads it (23 needs it to
// broadcast; one of unknown length moves: if it is short, 23 refuses it
// when it runs).
// Formula: unchanged.
#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void up(NormSite&) {}

// attn_mask and is_causal with nonpad_kv_seqlen folded in.
void fold_nonpad(NormSite& s) {
  if (!input_at(s.node, 4).empty()) {
    refuse(s, "nonpad_kv_seqlen ('" + s.node.input(6) + "') with past_key: the spec says not to use them together");
  }
  const bool causal = attr_int(s.node, "is_causal", 0) == 1;
  Lowering l{s, s.target_opset};
  const std::string allowed = allowed_keys(l, s.node.input(6), key_lengths(s, false), KeyRule{true, causal, -1, -1});
  const std::string folded = with_allowed(l, input_at(s.node, 3), allowed, known_type(s, s.node.input(0), "input Q"));
  while (s.node.input_size() < 4) s.node.add_input("");
  s.node.set_input(3, folded);
  remove_attr(s.node, "is_causal");
  s.report.dropped.push_back("nonpad_kv_seqlen (folded into attn_mask '" + folded + "'" +
                             (causal ? ", with is_causal's frontier)" : ")"));
}

void down(NormSite& s) {
  if (!input_at(s.node, 3).empty()) {
    const auto rank = s.rank_of(s.node.input(0));
    Lowering l{s, s.target_opset};
    s.node.set_input(3, padded_mask(l, s.node.input(3), s.node.input(1), input_at(s.node, 4), rank && *rank == 3));
  }
  if (!input_at(s.node, 6).empty()) fold_nonpad(s);
  while (s.node.input_size() > 6) s.node.mutable_input()->RemoveLast();
  while (s.node.input_size() > 3 && s.node.input(s.node.input_size() - 1).empty()) s.node.mutable_input()->RemoveLast();
}

}  // namespace

const Step attention_24{"attention_24", "attention_24", up, down};

}  // namespace bnorm::steps
