// The keys each query of an Attention-24/25 may attend, as a bool mask, for
// the versions and ops that lack nonpad_kv_seqlen (24) or the window (25):
// the 25 -> 24 and 24 -> 23 steps (steps/attention_24.cpp, attention_25.cpp)
// and the lowering below 23 (lower/attention_23.cpp).
//
//   A query i's absolute position is p = offset + i; offset = nonpad[b] - Sq
//   with nonpad_kv_seqlen, else the past length P. Key j is allowed when
//     padding        j < nonpad[b]
//     causal         j <= p
//     left  (>= 0)   j >= p - left
//     right (>= 0)   j <= p + right
//   Without nonpad_kv_seqlen: a constant [Sq, T] of those rules (key_bias: 0 or -inf).
//   With it, D[i, j] = j - i + Sq (a constant) and N = Reshape(nonpad, [-1, 1, 1, 1]):
//     padding Less(J, N)      causal Less(D, N + 1)
//     left    Less(N, D + left + 1)      right Less(D - right, N + 1)
//   And-ed: (B, 1, Sq, T).
//
// Formula: Attention-24/25's (Changelog.md), every comparison on integers,
// so exact. Preconditions: Sq and T known (and P without nonpad_kv_seqlen).
#include <fmt/format.h>

#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {

// D + shift, D[i, j] = j - i + Sq, as an int64 constant [Sq, T].
std::string distance(Lowering& l, const KeyLengths& n, int64_t shift, const std::string& what) {
  std::vector<double> d(static_cast<size_t>(n.sq * n.total));
  for (int64_t i = 0; i < n.sq; ++i) {
    for (int64_t j = 0; j < n.total; ++j) d[static_cast<size_t>(i * n.total + j)] = double(j - i + n.sq + shift);
  }
  return l.constant(DType::int64, {n.sq, n.total}, d, what);
}

// Without nonpad_kv_seqlen: key j is allowed for query i (position p = P + i).
bool allows(const KeyLengths& n, const KeyRule& r, int64_t i, int64_t j) {
  const int64_t p = n.past + i;
  return (!r.causal || j <= p) && (r.left < 0 || j >= p - r.left) && (r.right < 0 || j <= p + r.right);
}

// The rule's [Sq, T] table without nonpad_kv_seqlen: `yes` where allowed, `no` elsewhere.
std::vector<double> key_table(const KeyLengths& n, const KeyRule& r, double yes, double no) {
  std::vector<double> a(static_cast<size_t>(n.sq * n.total));
  for (int64_t i = 0; i < n.sq; ++i) {
    for (int64_t j = 0; j < n.total; ++j) a[static_cast<size_t>(i * n.total + j)] = allows(n, r, i, j) ? yes : no;
  }
  return a;
}

}  // namespace

std::string allowed_keys(Lowering& l, const std::string& nonpad, const KeyLengths& n, const KeyRule& r) {
  if (nonpad.empty()) return l.constant(DType::boolean, {n.sq, n.total}, key_table(n, r, 1, 0), "allowed");
  const std::string nb = l.reshape(nonpad, {-1, 1, 1, 1}, "nonpad_b111");
  std::string n1;  // N + 1, made once
  const auto plus_one = [&] {
    if (n1.empty()) n1 = l.add("Add", {nb, l.constant(DType::int64, {}, {1}, "one")}, "nonpad_plus_one");
    return n1;
  };
  std::vector<std::string> parts;
  if (r.padding) {
    std::vector<double> keys(static_cast<size_t>(n.total));
    for (int64_t j = 0; j < n.total; ++j) keys[static_cast<size_t>(j)] = double(j);
    parts.push_back(l.add("Less", {l.constant(DType::int64, {n.total}, keys, "key_index"), nb}, "not_padding"));
  }
  if (r.causal) parts.push_back(l.add("Less", {distance(l, n, 0, "key_minus_query"), plus_one()}, "causal"));
  if (r.left >= 0) parts.push_back(l.add("Less", {nb, distance(l, n, r.left + 1, "left_edge")}, "left_window"));
  if (r.right >= 0) parts.push_back(l.add("Less", {distance(l, n, -r.right, "right_edge"), plus_one()}, "right_window"));
  if (parts.empty()) refuse(l.s, "no rule for the allowed keys");
  std::string a = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) a = l.add("And", {a, parts[i]}, "allowed");
  l.s.new_types[a] = DType::boolean;  // later steps read its type (25 -> 24 -> 23)
  l.s.new_ranks[a] = 4;
  return a;
}

std::string key_bias(Lowering& l, const std::string& nonpad, const KeyLengths& n, const KeyRule& r, DType t) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (nonpad.empty()) return l.constant(t, {n.sq, n.total}, key_table(n, r, 0, -kInf), "key_bias");
  return l.add("Where", {allowed_keys(l, nonpad, n, r), l.scalar(t, 0, "zero_a"), l.scalar(t, -kInf, "minus_inf_a")},
               "key_bias");
}

KeyLengths key_lengths(const NormSite& s, bool need_past) {
  const auto rank = s.rank_of(s.node.input(0));
  const size_t seq_axis = rank && *rank == 3 ? 1 : 2;
  const auto q = s.dims_of(s.node.input(0)), k = s.dims_of(s.node.input(1));
  if (!q || !k || q->size() <= seq_axis || k->size() <= seq_axis || (*q)[seq_axis] < 0 || (*k)[seq_axis] < 0) {
    refuse(s, "the keys each query may attend become a mask of (query, key) positions, and Q's and K's sequence "
              "lengths are not known");
  }
  KeyLengths n{(*q)[seq_axis], 0, (*k)[seq_axis]};
  const std::string past = input_at(s.node, 4);
  if (!past.empty()) {
    const auto p = s.dims_of(past);
    if (p && p->size() == 4 && (*p)[2] >= 0) n.past = (*p)[2];
    else if (need_past) refuse(s, fmt::format("the length of past_key '{}' is not known", past));
  }
  n.total += n.past;
  return n;
}

std::string with_allowed(Lowering& l, const std::string& mask, const std::string& allowed, DType q_type) {
  NormSite& s = l.s;
  if (mask.empty()) return allowed;
  const auto mt = s.type_of(mask);
  if (mt && *mt == DType::boolean) {
    const std::string both = l.add("And", {mask, allowed}, "mask_and_allowed");
    s.new_types[both] = DType::boolean;
    return both;
  }
  if (!mt || *mt != q_type) {
    refuse(s, fmt::format("attn_mask '{}' is neither bool nor of Q's type, so the keys it allows cannot join it", mask));
  }
  const std::string bias = l.add(
      "Where", {allowed, l.scalar(q_type, 0, "zero"), l.scalar(q_type, -std::numeric_limits<double>::infinity(), "minus_inf")},
      "allowed_bias");
  const std::string sum = l.add("Add", {mask, bias}, "mask_plus_allowed");
  s.new_types[sum] = q_type;
  return sum;
}

}  // namespace bnorm::steps
