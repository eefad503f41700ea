// What the lowerings share (steps/lower_*.cpp). A lowering replaces a node
// whose op does not exist at the target opset by the op's function body
// (ONNX 1.23's Operators.md), written in the forms of the model's current
// opset, `opset` below (ReduceMean's axes an input from 18, an attribute
// before); the rest of the conversion then moves those nodes down like any
// other. Every node goes to the site's `before`; the node itself is dropped
// (transforms/upgrade/lower_pass.cpp). Values are named "<node>_<what>", fresh; the node's
// outputs keep their names.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

struct Lowering {
  NormSite& s;
  int64_t opset;  // the model's opset: the forms the nodes are written in

  // A fresh value name "<node>_<what>".
  std::string value(const std::string& what);
  // op(in) -> out; `out` empty: a fresh "<node>_<what>". Returns the output.
  std::string add(const std::string& op, std::vector<std::string> in, const std::string& what,
                  const std::string& out = "");
  // A scalar initializer of type `t`.
  std::string scalar(DType t, double v, const std::string& what);
  // An initializer of type `t` and `dims` (values in row-major order), its type and rank recorded for the steps after.
  std::string constant(DType t, const std::vector<int64_t>& dims, const std::vector<double>& values,
                       const std::string& what);
  // Cast(in) to `to`; `in` itself when `from` is already `to` and `out` is empty.
  std::string cast(const std::string& in, DType from, DType to, const std::string& what, const std::string& out = "");
  // ReduceMean over `axes` (keepdims 1; none: every axis).
  std::string reduce_mean(const std::string& in, const std::vector<int64_t>& axes, const std::string& what,
                          const std::string& out = "");
  // Reshape(in, shape) with a constant shape.
  std::string reshape(const std::string& in, const std::vector<int64_t>& shape, const std::string& what);
  // The node's input `index` with dims `shape` (one -1 allowed): a constant
  // as a reshaped initializer, anything else through a Reshape.
  std::string reshaped_input(int index, const std::vector<int64_t>& shape, const std::string& what);
};

// The keys each query of Attention-24/25 may attend (lower/attention_keys.cpp).
struct KeyLengths {
  int64_t sq = 0, past = 0, total = 0;  // total = past + K's sequence length
};
struct KeyRule {
  bool padding = false;  // j < nonpad[b]
  bool causal = false;   // j <= p
  int64_t left = -1, right = -1;  // the window, -1 unbounded
};
// A bool of the allowed keys: a constant [Sq, T] without nonpad_kv_seqlen
// (`nonpad` empty), else (B, 1, Sq, T) computed from it.
std::string allowed_keys(Lowering& l, const std::string& nonpad, const KeyLengths& n, const KeyRule& r);
// Sq, P and T of the node, or an Error naming what is not known (P only when `need_past`).
KeyLengths key_lengths(const NormSite& s, bool need_past);
// The same keys as an additive bias of type `t`, 0 where allowed and -inf elsewhere: a constant [Sq, T]
// without nonpad_kv_seqlen, else Where(allowed_keys, 0, -inf).
std::string key_bias(Lowering& l, const std::string& nonpad, const KeyLengths& n, const KeyRule& r, DType t);
// `mask` restricted to `allowed`: And for a bool mask, Add(mask, Where(allowed, 0, -inf)) for
// one of Q's type, `allowed` itself without a mask; Error for another type.
std::string with_allowed(Lowering& l, const std::string& mask, const std::string& allowed, DType q_type);
// Attention-24/25's attn_mask padded to every key (False or -inf) when it is
// known to be shorter, as those versions pad it; else `mask` itself
// (lower/attention_23.cpp).
std::string padded_mask(Lowering& l, const std::string& mask, const std::string& k, const std::string& past_k,
                        bool three_d);

// The element type of the node's input or output `value`; Error naming the
// node when shape inference does not know it.
DType known_type(const NormSite& s, const std::string& value, const std::string& what);
// The floating type `stash_type` names (default 1, float); Error otherwise.
DType stash_type(const NormSite& s);
// `axis` (negative: from the back) to ReduceMean's axes [axis, rank):
// non-negative when X's rank is known; negative ones (from opset 11) when
// it is not, the axis is negative and the target is 11 or above; Error
// naming the node otherwise.
std::vector<int64_t> trailing_axes(const NormSite& s, int64_t axis);
// Axes as ReduceMean takes them at the target: negative ones made
// non-negative with X's rank (Error when it is needed and unknown).
std::vector<int64_t> axes_at_target(const NormSite& s, std::vector<int64_t> axes);
// Error naming the node unless the target has the multidirectional
// broadcasting every lowering relies on (opset 7), or has `op` (Erf: 9).
void require_broadcasting(const NormSite& s);
void require_op(const NormSite& s, const std::string& op, int64_t first_opset);
// The distinct ops of the site's `before`, in order: "ReduceMean, Sub, ...".
std::string lowered_ops(const NormSite& s);

}  // namespace bnorm::steps
