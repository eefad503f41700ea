// The additive bias of Attention (23, 24, 25): attn_mask, is_causal,
// nonpad_kv_seqlen and Attention-25's window, composed per query row.
//
// Contract (Changelog.md, Attention-23/24/25 with their errata):
//   offset(b) = P (past length) with past_key; nonpad_kv_seqlen[b] - Sq
//   with nonpad_kv_seqlen (24+); else 0. For query i of batch b, the
//   absolute position is p = offset(b) + i, and key j gets
//     mask(b, h, i, j)   attn_mask broadcast to (B, Hq, Sq, T): a bool True
//                        adds 0, False -inf, other types their value; from
//                        24 on a last dimension L < T (not 1) is padded
//                        with -inf for j >= L
//     -inf               j >= nonpad_kv_seqlen[b] (24+)
//     -inf               is_causal and j > p
//     -inf               left >= 0 and j < p - left   (25)
//     -inf               right >= 0 and j > p + right (25)
//   summed in float64. A row whose sum is -inf for every key is fully masked.
#pragma once

#include <cstdint>
#include <vector>

#include "eval/run/op.h"

namespace bnorm::eval {

struct AttentionDims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, past = 0, total = 0, head = 0, v_head = 0;
  bool three_d = false;
};

class AttentionBias {
 public:
  // Reads attn_mask (input 3), nonpad_kv_seqlen (input 6, 24+), is_causal
  // and the window attributes (25+) of ctx's node; Error(input) when they
  // do not fit d.
  AttentionBias(const OpContext& ctx, const AttentionDims& d);

  // Fills out[0, T) for query i of head h in batch b; returns whether
  // every key is masked out (-inf), which makes the row zero.
  bool row(int64_t b, int64_t h, int64_t i, double* out) const;

 private:
  void read_mask(const Tensor& mask, int version);
  void read_nonpad(const Tensor& lengths);

  AttentionDims d_;
  bool causal_ = false;
  int64_t left_ = -1, right_ = -1;
  std::vector<int64_t> offset_;  // per batch
  std::vector<int64_t> valid_;   // keys per batch (T without nonpad_kv_seqlen)
  bool has_nonpad_ = false;
  bool has_mask_ = false;
  int64_t mask_len_ = 0;         // keys the mask covers; later ones are -inf
  std::vector<double> values_;
  std::vector<int64_t> strides_;
};

}  // namespace bnorm::eval
