// Rules of the remaining math ops: Det, Einsum (explicit and implicit
// output, ellipsis broadcast), the window functions and MelWeightMatrix
// (from their size inputs' values; output_datatype), DynamicQuantizeLinear,
// the random ops (dtype, shape or the input's), and the losses
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: a scalar unless
// reduction = none).
#include <algorithm>
#include <map>

#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

std::optional<std::vector<InferredDim>> shape_of(const NodeCtx& c, size_t i) {
  if (const auto* s = c.shape(i)) return *s;
  return std::nullopt;
}

void det(NodeCtx& c) {
  const auto* s = c.shape(0);
  if (!s || s->size() < 2) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  c.set(0, c.elem(0), std::vector<InferredDim>(s->begin(), s->end() - 2));
}

// "ij,jk->ik", "...ii->...i", "ij,jk" (implicit: the letters seen once, sorted).
void einsum(NodeCtx& c) {
  std::string eq = attr_string(c.node, "equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  int32_t elem = c.elem(0);
  c.set(0, elem, std::nullopt);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t at = 0;;) {
    const size_t comma = lhs.find(',', at);
    terms.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (terms.size() != c.in.size()) return;
  std::map<char, InferredDim> dims;
  std::map<char, int> seen;
  std::optional<std::vector<InferredDim>> ellipsis;
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto* s = c.shape(i);
    if (!s) return;
    std::string term = terms[i];
    const size_t dots = term.find("...");
    const size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    if (letters > s->size() || (dots == std::string::npos && letters != s->size())) return;
    const size_t ell = s->size() - letters;
    size_t k = 0;
    for (size_t p = 0; p < term.size(); ++p) {
      if (p == dots) {
        const std::vector<InferredDim> e(s->begin() + static_cast<int64_t>(k), s->begin() + static_cast<int64_t>(k + ell));
        ellipsis = ellipsis ? broadcast({&*ellipsis, &e}) : e;
        k += ell;
        p += 2;
        continue;
      }
      const char l = term[p];
      ++seen[l];
      auto it = dims.find(l);
      dims[l] = it == dims.end() ? (*s)[k] : broadcast_dim(it->second, (*s)[k]);
      ++k;
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {
    if (ellipsis) out = "...";
    for (const auto& [l, n] : seen)
      if (n == 1) out += l;
  }
  std::vector<InferredDim> d;
  for (size_t p = 0; p < out.size(); ++p) {
    if (out.compare(p, 3, "...") == 0) {
      if (ellipsis) d.insert(d.end(), ellipsis->begin(), ellipsis->end());
      p += 2;
      continue;
    }
    auto it = dims.find(out[p]);
    if (it == dims.end()) return;
    d.push_back(it->second);
  }
  c.set(0, elem, d);
}

void window(NodeCtx& c) {
  const auto n = c.ints(0);
  const int32_t e = static_cast<int32_t>(attr_int(c.node, "output_datatype", kFloat));
  c.set(0, e, std::vector<InferredDim>{n && n->size() == 1 ? InferredDim::of((*n)[0]) : InferredDim{}});
}

void mel_weight_matrix(NodeCtx& c) {
  const auto bins = c.ints(0), dft = c.ints(1);
  const int32_t e = static_cast<int32_t>(attr_int(c.node, "output_datatype", kFloat));
  c.set(0, e,
        std::vector<InferredDim>{dft && dft->size() == 1 ? InferredDim::of((*dft)[0] / 2 + 1) : InferredDim{},
                                 bins && bins->size() == 1 ? InferredDim::of((*bins)[0]) : InferredDim{}});
}

void random_like(NodeCtx& c) {
  const int64_t dt = attr_int(c.node, "dtype", 0);
  c.set(0, dt ? static_cast<int32_t>(dt) : c.elem(0), shape_of(c, 0));
}

void random_shaped(NodeCtx& c) {
  const auto s = attr_ints(c.node, "shape");
  c.set(0, static_cast<int32_t>(attr_int(c.node, "dtype", kFloat)), s ? std::optional(known_dims(*s)) : std::nullopt);
}

// Output 0: [] with reduction mean or sum, else the labels' shape.
void loss(NodeCtx& c) {
  const bool none = attr_string(c.node, "reduction", "mean") == "none";
  c.set(0, c.elem(0), none ? shape_of(c, 1) : std::optional(std::vector<InferredDim>{}));
  c.set(1, c.elem(0), shape_of(c, 0));  // SoftmaxCrossEntropyLoss's log_prob
}

}  // namespace

void add_math_rules(RuleTable& t) {
  t["Det"] = det;
  t["Einsum"] = einsum;
  t["HannWindow"] = t["HammingWindow"] = t["BlackmanWindow"] = window;
  t["MelWeightMatrix"] = mel_weight_matrix;
  t["DynamicQuantizeLinear"] = [](NodeCtx& c) {
    c.set(0, onnx::TensorProto::UINT8, shape_of(c, 0));
    c.set(1, kFloat, std::vector<InferredDim>{});
    c.set(2, onnx::TensorProto::UINT8, std::vector<InferredDim>{});
  };
  t["RandomUniformLike"] = t["RandomNormalLike"] = t["Bernoulli"] = random_like;
  t["RandomUniform"] = t["RandomNormal"] = random_shaped;
  t["Multinomial"] = [](NodeCtx& c) {
    const auto* s = c.shape(0);
    c.set(0, static_cast<int32_t>(attr_int(c.node, "dtype", onnx::TensorProto::INT32)),
          std::vector<InferredDim>{s && s->size() == 2 ? (*s)[0] : InferredDim{},
                                   InferredDim::of(attr_int(c.node, "sample_size", 1))});
  };
  t["NegativeLogLikelihoodLoss"] = t["SoftmaxCrossEntropyLoss"] = loss;
}

}  // namespace bnorm::shape_infer
