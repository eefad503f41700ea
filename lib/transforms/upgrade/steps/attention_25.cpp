// Attention 24 <-> 25: the attributes left_window_size and right_window_size
// (-1: that side unbounded, the default) were added.
//
//   Attention-24: Attention(Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?)  is_causal, ...
//   Attention-25: the same, + left_window_size, right_window_size
//
// Up: nothing changes (a 24 node is a 25 node with both sizes -1). Down:
// sizes at -1 are dropped; otherwise the window becomes part of attn_mask
// (lower/attention_keys.cpp): a bool W of the keys j with
// p - left <= j <= p + right, p = offset + i (offset: nonpad[b] - Sq with
// nonpad_kv_seqlen, else the past length), then
//   attn_mask absent: W;  bool: And(attn_mask, W);  Q's type: Add(attn_mask, Where(W, 0, -inf))
// (a mask known to be shorter than the keys padded first, as 24 pads it).
// is_causal and nonpad_kv_seqlen stay on the node: 24 composes them with
// the mask as 25 composes them with the window. Formula: unchanged.
// Preconditions: Sq and T known, and P without nonpad_kv_seqlen; not both
// nonpad_kv_seqlen and past_key (the spec says not to; eval refuses it);
// sizes of -1 or more.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void up(NormSite&) {}

void down(NormSite& s) {
  const int64_t left = attr_int(s.node, "left_window_size", -1), right = attr_int(s.node, "right_window_size", -1);
  remove_attr(s.node, "left_window_size");
  remove_attr(s.node, "right_window_size");
  if (left < -1 || right < -1) refuse(s, fmt::format("window sizes {} and {}: each must be -1 or at least 0", left, right));
  if (left == -1 && right == -1) return;
  const std::string nonpad = input_at(s.node, 6);
  if (!nonpad.empty() && !input_at(s.node, 4).empty()) {
    refuse(s, "nonpad_kv_seqlen with past_key: the spec says not to use them together");
  }
  Lowering l{s, s.target_opset};
  const std::string allowed = allowed_keys(l, nonpad, key_lengths(s, nonpad.empty()), KeyRule{false, false, left, right});
  std::string mask = input_at(s.node, 3);
  if (!mask.empty()) {
    const auto rank = s.rank_of(s.node.input(0));
    mask = padded_mask(l, mask, s.node.input(1), input_at(s.node, 4), rank && *rank == 3);
  }
  const std::string folded = with_allowed(l, mask, allowed, known_type(s, s.node.input(0), "input Q"));
  while (s.node.input_size() < 4) s.node.add_input("");
  s.node.set_input(3, folded);
  s.report.dropped.push_back(fmt::format("left_window_size = {}, right_window_size = {} (folded into attn_mask '{}')",
                                         left, right, folded));
}

}  // namespace

const Step attention_25{"attention_25", "attention_25", up, down};

}  // namespace bnorm::steps
