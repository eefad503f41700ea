// Attention 23 <-> 24: input 6, nonpad_kv_seqlen (an external KV cache's
// count of valid keys per batch), was added.
//
//   Attention-23: Attention(Q, K, V, attn_mask?, past_key?, past_value?)                    -> Y, ...
//   Attention-24: Attention(Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?) -> Y, ...
//
// Without nonpad_kv_seqlen, version 24 means what 23 means (the causal
// offset is past_sequence_length, or 0 without past_key, in both texts; the
// Changelog's errata for fully-masked rows apply to both in place).
// Up: nothing changes. Down: a node that gives nonpad_kv_seqlen (a
// non-empty input 6) is refused, naming it: version 23 has no input that
// masks a padded cache or moves the causal frontier by it; an empty
// trailing input 6 is removed. An attn_mask known to be shorter than the
// keys is refused (24 pads it with -inf, 23 needs it to broadcast; one of
// unknown length moves: if it is short, 23 refuses it when it runs).
// Formula: unchanged.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void up(NormSite&) {}

void down(NormSite& s) {
  if (s.node.input_size() > 6 && !s.node.input(6).empty()) {
    refuse(s, "input 6, nonpad_kv_seqlen ('" + s.node.input(6) +
                  "'), was added at version 24: Attention-23 has no input that masks the padded keys of an external "
                  "cache and moves the causal frontier by them");
  }
  if (s.node.input_size() > 3 && !s.node.input(3).empty()) {
    const auto rank = s.rank_of(s.node.input(0));
    refuse_short_mask(s, s.node.input(3), s.node.input(1), s.node.input_size() > 4 ? s.node.input(4) : "",
                      rank && *rank == 3);
  }
  while (s.node.input_size() > 6) s.node.mutable_input()->RemoveLast();
  while (s.node.input_size() > 3 && s.node.input(s.node.input_size() - 1).empty()) s.node.mutable_input()->RemoveLast();
}

}  // namespace

const Step attention_24{"attention_24", "attention_24", up, down};

}  // namespace bnorm::steps
