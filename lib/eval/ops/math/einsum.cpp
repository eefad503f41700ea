// Einsum (12): output[output-term] = sum over the other labels of
// prod_k input_k[term_k], for an equation "term1,term2,...[->output]".
//
// Labels are letters (a..z and A..Z, distinct); spaces are ignored. A label
// repeated within a term takes the diagonal. Without "->" the output holds
// the labels occurring exactly once in the equation, in ASCII order, after
// the ellipsis dimensions. An ellipsis stands for the dimensions a term's
// letters leave over; the ellipses of all terms broadcast against each
// other right-aligned (numpy's rule; the spec asks for equal counts, which
// this includes). An explicit output without an ellipsis sums over the
// ellipsis dimensions. A letter has one size everywhere.
//
// Floating types accumulate in double and round once; integer types
// accumulate in uint64 arithmetic, which wraps exactly as the integer type
// would, then keep the low bits.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/math/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

// Ellipsis dimensions are labels 52.. (at most 64 of them).
constexpr int kLetters = 52;
constexpr int kMaxLabels = kLetters + 64;
// The most multiply-adds one node may take (terms x output x summed labels).
constexpr double kMaxWork = 1e10;

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

// One term: letters as labels, the ellipsis as -1.
std::vector<int> parse_term(const std::string& s) {
  std::vector<int> out;
  bool ellipsis = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (ellipsis || s.compare(i, 3, "...") != 0) fail(ErrorKind::input, "term '{}' has a bad ellipsis", s);
      ellipsis = true;
      out.push_back(-1);
      i += 2;
      continue;
    }
    const int l = letter_label(s[i]);
    if (l < 0) fail(ErrorKind::input, "term '{}' holds '{}', which is no letter", s, s[i]);
    out.push_back(l);
  }
  return out;
}

struct Plan {
  std::vector<std::vector<int>> inputs;  // per input dimension: its label
  std::vector<int> output;               // per output dimension: its label
  std::array<int64_t, kMaxLabels> size{};
  std::array<bool, kMaxLabels> seen{};
};

// Replaces a term's ellipsis by the labels of its last `count` of `total`
// ellipsis dimensions.
std::vector<int> expand(const std::vector<int>& term, int64_t count, int64_t total) {
  std::vector<int> out;
  for (int l : term) {
    if (l >= 0) {
      out.push_back(l);
      continue;
    }
    for (int64_t k = total - count; k < total; ++k) out.push_back(kLetters + static_cast<int>(k));
  }
  return out;
}

std::vector<std::vector<int>> parse_terms(const std::string& lhs) {
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) return terms;
    start = comma + 1;
  }
}

// Fills p.inputs, p.size and p.seen from the terms and the inputs' shapes;
// returns how many ellipsis dimensions there are.
int64_t bind_labels(Plan& p, const std::vector<std::vector<int>>& terms, const std::vector<const Tensor*>& in,
                    const std::string& equation) {
  std::vector<int64_t> ell_count(terms.size(), 0);
  int64_t ell_total = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const bool has = std::count(terms[k].begin(), terms[k].end(), -1) > 0;
    const auto letters = static_cast<int64_t>(terms[k].size()) - (has ? 1 : 0);
    const auto rank = static_cast<int64_t>(in[k]->dims.size());
    if (has ? rank < letters : rank != letters) {
      fail(ErrorKind::input, "input {} of shape {} does not fit term {} of '{}'", k, shape_str(in[k]->dims), k,
           equation);
    }
    ell_count[k] = has ? rank - letters : 0;
    ell_total = std::max(ell_total, ell_count[k]);
  }
  if (ell_total > kMaxLabels - kLetters) fail(ErrorKind::unsupported, "an ellipsis of {} dimensions", ell_total);
  for (size_t k = 0; k < terms.size(); ++k) {
    p.inputs.push_back(expand(terms[k], ell_count[k], ell_total));
    for (size_t d = 0; d < p.inputs[k].size(); ++d) {
      const int l = p.inputs[k][d];
      const int64_t n = in[k]->dims[d];
      if (!p.seen[l] || p.size[l] == n) {
        p.size[l] = n;
      } else if (l >= kLetters && (n == 1 || p.size[l] == 1)) {
        p.size[l] = std::max(p.size[l], n);
      } else {
        fail(ErrorKind::input, "a label of '{}' has sizes {} and {}", equation, p.size[l], n);
      }
      p.seen[l] = true;
    }
  }
  return ell_total;
}

Plan make_plan(const std::string& equation, const std::vector<const Tensor*>& in) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::vector<std::vector<int>> terms = parse_terms(eq.substr(0, arrow));
  if (terms.size() != in.size()) {
    fail(ErrorKind::input, "equation '{}' has {} terms for {} inputs", equation, terms.size(), in.size());
  }
  Plan p;
  const int64_t ell_total = bind_labels(p, terms, in, equation);
  if (arrow == std::string::npos) {
    std::array<int, kMaxLabels> occurrences{};
    for (const auto& term : terms) {
      for (int l : term) {
        if (l >= 0) ++occurrences[l];
      }
    }
    for (int64_t k = 0; k < ell_total; ++k) p.output.push_back(kLetters + static_cast<int>(k));
    for (int l = 0; l < kLetters; ++l) {
      if (occurrences[l] == 1) p.output.push_back(l);
    }
    return p;
  }
  p.output = expand(parse_term(eq.substr(arrow + 2)), ell_total, ell_total);
  std::array<bool, kMaxLabels> used{};
  for (int l : p.output) {
    if (l < kLetters && !p.seen[l]) fail(ErrorKind::input, "output label of '{}' is in no input", equation);
    if (used[l]) fail(ErrorKind::input, "output of '{}' repeats a label", equation);
    used[l] = true;
  }
  return p;
}

// Sum over every label outside the output, output labels outer.
template <typename A>
std::vector<A> contract(const Plan& p, const std::vector<std::vector<A>>& vals, const std::vector<const Tensor*>& in) {
  std::vector<int> order = p.output;
  for (int l = 0; l < kMaxLabels; ++l) {
    if (p.seen[l] && std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  }
  const size_t nl = order.size(), nin = vals.size();
  std::vector<int64_t> extent(nl);
  // Element stride of each input per loop label (summed: diagonals; 0 where
  // the input lacks the label or broadcasts it).
  std::vector<std::vector<int64_t>> stride(nin, std::vector<int64_t>(nl, 0));
  double work = static_cast<double>(nin);
  for (size_t j = 0; j < nl; ++j) {
    extent[j] = p.size[order[j]];
    work *= static_cast<double>(extent[j]);
  }
  if (work > kMaxWork) fail(ErrorKind::unsupported, "Einsum of {:.3g} multiply-adds (the limit is 1e10)", work);
  for (size_t k = 0; k < nin; ++k) {
    int64_t s = 1;
    for (size_t d = p.inputs[k].size(); d-- > 0;) {
      const size_t j = std::find(order.begin(), order.end(), p.inputs[k][d]) - order.begin();
      if (in[k]->dims[d] != 1 || extent[j] == 1) stride[k][j] += s;
      s *= in[k]->dims[d];
    }
  }
  const size_t nout = p.output.size();
  const std::vector<int64_t> out_dims(extent.begin(), extent.begin() + nout);
  std::vector<A> out(static_cast<size_t>(checked_buffer_numel(out_dims, sizeof(A), "Einsum's output")), A(0));
  if (std::find(extent.begin(), extent.end(), 0) != extent.end()) return out;
  int64_t inner = 1;
  for (size_t j = nout; j < nl; ++j) inner *= extent[j];
  std::vector<int64_t> idx(nl, 0), off(nin, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    A acc(0);
    for (int64_t it = 0; it < inner; ++it) {
      A term(1);
      for (size_t k = 0; k < nin; ++k) term *= vals[k][off[k]];
      acc += term;
      // Odometer over all labels, last fastest; the output position advances
      // when the summed labels wrap.
      for (size_t j = nl; j-- > 0;) {
        for (size_t k = 0; k < nin; ++k) off[k] += stride[k][j];
        if (++idx[j] < extent[j]) break;
        for (size_t k = 0; k < nin; ++k) off[k] -= stride[k][j] * extent[j];
        idx[j] = 0;
      }
    }
    out[o] = acc;
  }
  return out;
}

template <typename A>
Tensor run_einsum(const Plan& p, const std::vector<const Tensor*>& in) {
  std::vector<std::vector<A>> vals;
  for (const Tensor* t : in) vals.push_back(load_values<A>(*t));
  const std::vector<A> r = contract(p, vals, in);
  std::vector<int64_t> dims;
  for (int l : p.output) dims.push_back(p.size[l]);
  Tensor out(in[0]->dtype, dims);
  if constexpr (std::is_floating_point_v<A>) {
    store_values(out, r.data());
  } else {
    with_numeric_type(out.dtype, "Einsum", [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < r.size(); ++i) out.data<T>()[i] = static_cast<T>(r[i]);
      return 0;
    });
  }
  return out;
}

}  // namespace

Tensors op_einsum(const OpContext& ctx) {
  const onnx::AttributeProto* eq = find_attr(*ctx.node, "equation");
  if (!eq) fail(ErrorKind::input, "Einsum needs the attribute 'equation'");
  std::vector<const Tensor*> in;
  for (size_t i = 0; i < ctx.input_count(); ++i) in.push_back(&ctx.required(i, "Inputs"));
  if (in.empty()) fail(ErrorKind::input, "Einsum needs at least one input");
  for (const Tensor* t : in) {
    if (t->dtype != in[0]->dtype || t->dtype == DType::boolean) {
      fail(ErrorKind::input, "inputs of types {} and {}: one numeric type is needed", dtype_name(in[0]->dtype),
           dtype_name(t->dtype));
    }
  }
  const Plan p = make_plan(attr_string(*ctx.node, "equation", ""), in);
  Tensors out(1);
  if (is_floating(in[0]->dtype)) {
    out[0] = run_einsum<double>(p, in);
  } else {
    out[0] = run_einsum<uint64_t>(p, in);
  }
  return out;
}


}  // namespace bnorm::eval
