// Rules of the ops that move or copy a tensor's elements: Flatten,
// Transpose, Expand, Tile, Split (split attribute before 13, input from 13,
// num_outputs from 18), Pad (paddings before 2, pads attribute before 11,
// input from 11, axes from 18), Resize and Upsample (constant scales or
// sizes), DepthToSpace, SpaceToDepth, GatherElements, GatherND, EyeLike,
// NonZero, TopK, OneHot.
#include <cmath>

#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

constexpr int32_t kInt64 = onnx::TensorProto::INT64;

void flatten(NodeCtx& c) {
  const auto* s = c.shape(0);
  if (!s) {
    c.set(0, c.elem(0), std::vector<InferredDim>(2));
    return;
  }
  const int64_t rank = static_cast<int64_t>(s->size());
  int64_t axis = attr_int(c.node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return;
  auto prod = [&](size_t from, size_t to) {
    if (to - from == 1) return (*s)[from];
    const int64_t p = known_product(*s, from, to);
    return p >= 0 ? InferredDim::of(p) : InferredDim{};
  };
  c.set(0, c.elem(0), std::vector<InferredDim>{axis == 0 ? InferredDim::of(1) : prod(0, static_cast<size_t>(axis)),
                                               axis == rank ? InferredDim::of(1) : prod(static_cast<size_t>(axis), s->size())});
}

void transpose(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  std::vector<int64_t> perm;
  if (auto p = attr_ints(c.node, "perm"); p && !p->empty()) perm = *p;
  else
    for (int64_t i = static_cast<int64_t>(s->size()) - 1; i >= 0; --i) perm.push_back(i);
  if (perm.size() != s->size()) return;
  std::vector<InferredDim> d;
  for (int64_t p : perm) {
    const int64_t k = norm_axis(p, static_cast<int64_t>(s->size()));
    if (k < 0) return;
    d.push_back((*s)[static_cast<size_t>(k)]);
  }
  c.set(0, c.elem(0), d);
}

void expand(NodeCtx& c) {
  const InferredValue* shape = c.input(1);
  if (shape && shape->values) {
    c.set(0, c.elem(0), broadcast({c.shape(0), &*shape->values}));
  } else if (const auto* sh = c.shape(1); sh && sh->size() == 1 && (*sh)[0].known() && (*sh)[0].value <= kMaxRank && c.shape(0)) {
    const size_t r = std::max(static_cast<size_t>((*sh)[0].value), c.shape(0)->size());
    c.set(0, c.elem(0), std::vector<InferredDim>(r));
  } else {
    c.set(0, c.elem(0), std::nullopt);
  }
}

void tile(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  std::vector<InferredDim> d(s->size());
  const auto reps = c.ints(1);
  if (c.version >= 6 && reps && reps->size() == s->size()) {
    for (size_t i = 0; i < s->size(); ++i)
      d[i] = (*s)[i].known() ? InferredDim::of((*s)[i].value * (*reps)[i]) : (*reps)[i] == 1 ? (*s)[i] : InferredDim{};
  }
  c.set(0, c.elem(0), d);
}

void split(NodeCtx& c) {
  const auto* s = c.shape(0);
  for (size_t o = 0; o < c.out.size(); ++o) c.set(o, c.elem(0), s ? std::optional(*s) : std::nullopt);
  if (!s) return;
  const int64_t axis = norm_axis(attr_int(c.node, "axis", 0), static_cast<int64_t>(s->size()));
  if (axis < 0) return;
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = static_cast<int64_t>(c.out.size());
  std::optional<std::vector<int64_t>> sizes;
  if (c.version < 13) {
    sizes = attr_ints(c.node, "split");
    if (!sizes && c.version == 1 && c.has_input(1)) sizes = c.ints(1);
  } else if (c.has_input(1)) {
    sizes = c.ints(1);
    if (!sizes) {
      for (size_t o = 0; o < c.out.size(); ++o) (*c.out[o].shape)[a] = InferredDim{};
      return;
    }
  }
  const InferredDim& d = (*s)[a];
  if (!sizes && d.known()) {
    const int64_t num = c.version >= 18 ? attr_int(c.node, "num_outputs", n) : n;
    if (num <= 0) return;
    std::vector<int64_t> v;
    if (c.version >= 18) {
      const int64_t chunk = (d.value + num - 1) / num;
      for (int64_t i = 0; i < num; ++i) v.push_back(std::max<int64_t>(0, std::min(chunk, d.value - i * chunk)));
    } else if (d.value % num == 0) {
      v.assign(static_cast<size_t>(num), d.value / num);
    }
    if (!v.empty()) sizes = v;
  }
  for (size_t o = 0; o < c.out.size(); ++o)
    (*c.out[o].shape)[a] = sizes && o < sizes->size() ? InferredDim::of((*sizes)[o]) : InferredDim{};
  // A propagated vector split into parts (AffineGrid's N, C, H, W).
  const InferredValue* v = c.input(0);
  if (!v->values || s->size() != 1 || !sizes) return;
  size_t at = 0;
  for (size_t o = 0; o < c.out.size() && o < sizes->size(); ++o) {
    const size_t n = static_cast<size_t>((*sizes)[o]);
    if (at + n > v->values->size()) return;
    c.out[o].values = std::vector<InferredDim>(v->values->begin() + static_cast<int64_t>(at), v->values->begin() + static_cast<int64_t>(at + n));
    at += n;
  }
}

void pad(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  const int64_t rank = static_cast<int64_t>(s->size());
  std::optional<std::vector<int64_t>> pads =
      c.version < 2 ? attr_ints(c.node, "paddings") : c.version < 11 ? attr_ints(c.node, "pads") : c.ints(1);
  std::vector<int64_t> axes;
  if (c.version >= 18 && c.has_input(3)) {
    auto a = c.ints(3);
    if (!a) pads.reset();
    else axes = *a;
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<InferredDim> d = *s;
  if (!pads || pads->size() != 2 * axes.size()) {
    if (c.version >= 18 && !axes.empty()) {
      for (int64_t a : axes)
        if (norm_axis(a, rank) >= 0) d[static_cast<size_t>(norm_axis(a, rank))] = InferredDim{};
    } else {
      d.assign(d.size(), InferredDim{});
    }
    c.set(0, c.elem(0), d);
    return;
  }
  const size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    const int64_t a = norm_axis(axes[i], rank);
    if (a < 0) return;
    InferredDim& x = d[static_cast<size_t>(a)];
    const int64_t add = (*pads)[i] + (*pads)[i + k];
    if (x.known()) x = InferredDim::of(x.value + add);
    else if (add != 0) x = InferredDim{};
  }
  c.set(0, c.elem(0), d);
}

// Resize (10: scales; 11+: roi, scales, sizes; 18+: axes) and Upsample
// (scales attribute before 9, input from 9): floor(dim * scale), or sizes.
void resize(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  const int64_t rank = static_cast<int64_t>(s->size());
  std::vector<InferredDim> d(s->size());
  const bool upsample = c.node.op_type() == "Upsample";
  std::optional<std::vector<double>> scales;
  std::optional<std::vector<int64_t>> sizes;
  if (upsample && c.version < 9) {
    if (auto f = attr_floats(c.node, "scales")) scales = std::vector<double>(f->begin(), f->end());
  } else if (upsample || c.version == 10) {
    scales = c.reals(1);
  } else if (c.has_input(3)) {
    sizes = c.ints(3);
  } else {
    scales = c.reals(2);
  }
  std::vector<int64_t> axes;
  if (auto a = attr_ints(c.node, "axes"); a && c.version >= 18 && !upsample) axes = *a;
  else
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  const std::string policy = attr_string(c.node, "keep_aspect_ratio_policy", "stretch");
  if (sizes && sizes->size() == axes.size() && c.version >= 18 && policy != "stretch") {
    // One scale for every axis: the smallest (not_larger) or largest
    // (not_smaller) of sizes / input; out = round(scale * in).
    std::optional<double> scale;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = norm_axis(axes[i], rank);
      if (a < 0 || !(*s)[static_cast<size_t>(a)].known() || (*s)[static_cast<size_t>(a)].value == 0) return;
      const double r = static_cast<double>((*sizes)[i]) / static_cast<double>((*s)[static_cast<size_t>(a)].value);
      scale = !scale ? r : policy == "not_larger" ? std::min(*scale, r) : std::max(*scale, r);
    }
    d = *s;
    for (int64_t a : axes) {
      InferredDim& x = d[static_cast<size_t>(norm_axis(a, rank))];
      x = InferredDim::of(static_cast<int64_t>(std::round(*scale * static_cast<double>(x.value))));
    }
  } else if (sizes && sizes->size() == axes.size()) {
    d = *s;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = norm_axis(axes[i], rank);
      if (a < 0) return;
      d[static_cast<size_t>(a)] = InferredDim::of((*sizes)[i]);
    }
  } else if (scales && scales->size() == axes.size()) {
    d = *s;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = norm_axis(axes[i], rank);
      if (a < 0) return;
      InferredDim& x = d[static_cast<size_t>(a)];
      x = x.known() ? InferredDim::of(static_cast<int64_t>(std::floor(static_cast<double>(x.value) * (*scales)[i])))
                    : (*scales)[i] == 1.0 ? x : InferredDim{};
    }
  }
  c.set(0, c.elem(0), d);
}

void depth_space(NodeCtx& c, bool to_space) {
  const auto* s = c.shape(0);
  const int64_t b = attr_int(c.node, "blocksize", 1);
  if (!s || s->size() != 4 || b <= 0) {
    c.set(0, c.elem(0), std::vector<InferredDim>(4));
    return;
  }
  std::vector<InferredDim> d = *s;
  auto scale = [](const InferredDim& x, int64_t mul, int64_t div) {
    return x.known() && (x.value * mul) % div == 0 ? InferredDim::of(x.value * mul / div) : InferredDim{};
  };
  d[1] = to_space ? scale(d[1], 1, b * b) : scale(d[1], b * b, 1);
  for (size_t i = 2; i < 4; ++i) d[i] = to_space ? scale(d[i], b, 1) : scale(d[i], 1, b);
  c.set(0, c.elem(0), d);
}

void topk(NodeCtx& c) {
  const auto* s = c.shape(0);
  std::optional<std::vector<InferredDim>> d;
  if (s) {
    d = *s;
    const int64_t axis = norm_axis(attr_int(c.node, "axis", -1), static_cast<int64_t>(s->size()));
    if (axis < 0) return;
    std::optional<int64_t> k;
    if (c.version < 10) k = attr_int(c.node, "k", -1);
    else if (auto v = c.ints(1); v && v->size() == 1) k = (*v)[0];
    (*d)[static_cast<size_t>(axis)] = k && *k >= 0 ? InferredDim::of(*k) : InferredDim{};
  }
  c.set(0, c.elem(0), d);
  c.set(1, kInt64, d);
}

}  // namespace

void add_tensor_rules(RuleTable& t) {
  t["Flatten"] = flatten;
  t["Transpose"] = transpose;
  t["Expand"] = expand;
  t["Tile"] = tile;
  t["Split"] = split;
  t["Pad"] = pad;
  t["Resize"] = t["Upsample"] = resize;
  t["DepthToSpace"] = [](NodeCtx& c) { depth_space(c, true); };
  t["SpaceToDepth"] = [](NodeCtx& c) { depth_space(c, false); };
  t["GatherElements"] = [](NodeCtx& c) {
    c.set(0, c.elem(0), c.shape(1) ? std::optional(*c.shape(1)) : std::nullopt);
  };
  t["GatherND"] = [](NodeCtx& c) {
    const auto *d = c.shape(0), *i = c.shape(1);
    const int64_t b = attr_int(c.node, "batch_dims", 0);
    if (!d || !i || i->empty() || !i->back().known()) {
      c.set(0, c.elem(0), std::nullopt);
      return;
    }
    const size_t last = static_cast<size_t>(i->back().value);
    std::vector<InferredDim> r(i->begin(), i->end() - 1);
    if (static_cast<size_t>(b) + last > d->size()) return;
    r.insert(r.end(), d->begin() + b + static_cast<int64_t>(last), d->end());
    c.set(0, c.elem(0), r);
  };
  t["EyeLike"] = [](NodeCtx& c) {
    const int64_t dt = attr_int(c.node, "dtype", 0);
    c.set(0, dt ? static_cast<int32_t>(dt) : c.elem(0), c.shape(0) ? std::optional(*c.shape(0)) : std::nullopt);
  };
  t["NonZero"] = [](NodeCtx& c) {
    const auto* s = c.shape(0);
    c.set(0, kInt64, std::vector<InferredDim>{s ? InferredDim::of(static_cast<int64_t>(s->size())) : InferredDim{}, {}});
  };
  t["TopK"] = topk;
  t["OneHot"] = [](NodeCtx& c) {
    const auto* s = c.shape(0);
    if (!s) {
      c.set(0, c.elem(2), std::nullopt);
      return;
    }
    const int64_t rank = static_cast<int64_t>(s->size()) + 1;
    const int64_t axis = norm_axis(attr_int(c.node, "axis", -1), rank);
    if (axis < 0) return;
    std::vector<InferredDim> d = *s;
    const auto depth = c.reals(1);  // any numeric type
    d.insert(d.begin() + axis, depth && depth->size() == 1 ? InferredDim::of(static_cast<int64_t>((*depth)[0])) : InferredDim{});
    c.set(0, c.elem(2), d);
  };
}

}  // namespace bnorm::shape_infer
