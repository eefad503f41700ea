// Rules of the ops that compute shapes, with data propagation of small
// integer tensors: Constant, Shape (start/end from 15), ConstantOfShape,
// Range, Gather, Slice (attributes before 10, inputs from 10), Concat,
// Unsqueeze and Squeeze (axes attribute before 13, input from 13), Reshape
// (0 copies a dim unless allowzero, -1 is inferred).
#include <algorithm>
#include <array>
#include <cmath>

#include "model/shape_infer/rules.h"
#include "model/tensor_proto.h"

namespace bnorm::shape_infer {

namespace {

constexpr int32_t kInt64 = onnx::TensorProto::INT64;

// Axes from the attribute before `input_from`, from input `index` after.
std::optional<std::vector<int64_t>> axes_of(const NodeCtx& c, int input_from, size_t index) {
  if (c.version < input_from) return attr_ints(c.node, "axes");
  if (!c.has_input(index)) return std::nullopt;
  return c.ints(index);
}

void constant(NodeCtx& c) {
  for (const auto& a : c.node.attribute()) {
    InferredValue v;
    if (a.name() == "value" && a.has_t()) {
      onnx::TensorProto t = a.t();
      v.elem = t.data_type();
      v.shape = known_dims({t.dims().begin(), t.dims().end()});
      read_constant(t, v);
    } else if (a.name() == "value_float") {
      v.elem = onnx::TensorProto::FLOAT, v.shape.emplace(), v.reals = std::vector<double>{a.f()};
    } else if (a.name() == "value_floats") {
      v.elem = onnx::TensorProto::FLOAT, v.shape = known_dims({a.floats_size()});
      if (a.floats_size() <= kMaxPropagated) v.reals = std::vector<double>(a.floats().begin(), a.floats().end());
    } else if (a.name() == "value_int") {
      v.elem = kInt64, v.shape.emplace(), v.values = known_dims({a.i()});
    } else if (a.name() == "value_ints") {
      v.elem = kInt64, v.shape = known_dims({a.ints_size()});
      if (a.ints_size() <= kMaxPropagated) v.values = known_dims({a.ints().begin(), a.ints().end()});
    } else if (a.name() == "value_string") {
      v.elem = onnx::TensorProto::STRING, v.shape.emplace();
    } else if (a.name() == "value_strings") {
      v.elem = onnx::TensorProto::STRING, v.shape = known_dims({a.strings_size()});
    } else if (a.name() == "sparse_value") {
      v.elem = a.sparse_tensor().values().data_type();
      v.shape = known_dims({a.sparse_tensor().dims().begin(), a.sparse_tensor().dims().end()});
    } else {
      continue;
    }
    c.out[0] = v;
    return;
  }
}

void shape(NodeCtx& c) {
  const auto* s = c.shape(0);
  if (!s) {
    c.set(0, kInt64, std::vector<InferredDim>{InferredDim{}});
    return;
  }
  const int64_t r = static_cast<int64_t>(s->size());
  int64_t start = 0, end = r;
  if (c.version >= 15) {
    start = attr_int(c.node, "start", 0);
    end = attr_int(c.node, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
  }
  std::vector<InferredDim> v(s->begin() + start, s->begin() + std::max(start, end));
  c.set(0, kInt64, known_dims({static_cast<int64_t>(v.size())}));
  c.out[0].values = v;
}

void constant_of_shape(NodeCtx& c) {
  int32_t elem = onnx::TensorProto::FLOAT;
  if (const auto* a = find_attr(c.node, "value"); a && a->has_t()) elem = a->t().data_type();
  std::optional<std::vector<InferredDim>> dims;
  if (const InferredValue* s = c.input(0); s && s->values) dims = *s->values;
  else if (const auto* sh = c.shape(0); sh && sh->size() == 1 && (*sh)[0].known() && (*sh)[0].value <= kMaxRank)
    dims = std::vector<InferredDim>(static_cast<size_t>((*sh)[0].value));
  c.set(0, elem, dims);
  if (dims && is_index_type(elem)) {
    const int64_t n = known_product(*dims, 0, dims->size());
    const auto* a = find_attr(c.node, "value");
    if (n >= 0 && n <= kMaxPropagated) {
      int64_t fill = 0;
      if (a && a->has_t())
        if (auto i = decode_tensor(a->t()).to_i64(); i && i->size() == 1) fill = (*i)[0];
      c.out[0].values = std::vector<InferredDim>(static_cast<size_t>(n), InferredDim::of(fill));
    }
  }
}

void range(NodeCtx& c) {
  c.set(0, c.elem(0), std::vector<InferredDim>{InferredDim{}});
  const auto s = c.reals(0), l = c.reals(1), d = c.reals(2);
  if (!s || !l || !d || s->size() != 1 || l->size() != 1 || d->size() != 1 || (*d)[0] == 0) return;
  const double n = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
  const int64_t count = std::max<int64_t>(0, static_cast<int64_t>(n));
  c.set(0, c.elem(0), known_dims({count}));
  if (count <= kMaxPropagated && c.ints(0) && c.ints(2)) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < count; ++i) v.push_back((*c.ints(0))[0] + i * (*c.ints(2))[0]);
    c.out[0].values = known_dims(v);
  }
}

void gather(NodeCtx& c) {
  const auto *data = c.shape(0), *idx = c.shape(1);
  if (!data || !idx) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  const int64_t axis = norm_axis(attr_int(c.node, "axis", 0), static_cast<int64_t>(data->size()));
  if (axis < 0) return;
  std::vector<InferredDim> d(data->begin(), data->begin() + axis);
  d.insert(d.end(), idx->begin(), idx->end());
  d.insert(d.end(), data->begin() + axis + 1, data->end());
  c.set(0, c.elem(0), d);
  const InferredValue* v = c.input(0);
  const auto i = c.ints(1);
  if (v->values && i && data->size() == 1 && idx->size() <= 1 && (*data)[0].known()) {
    std::vector<InferredDim> r;
    for (int64_t k : *i) {
      const int64_t at = norm_axis(k, (*data)[0].value);
      if (at < 0) return;
      r.push_back((*v->values)[static_cast<size_t>(at)]);
    }
    c.out[0].values = r;
  }
}

void slice(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  const int64_t rank = static_cast<int64_t>(s->size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (c.version < 10) {
    starts = attr_ints(c.node, "starts"), ends = attr_ints(c.node, "ends"), axes = attr_ints(c.node, "axes");
  } else {
    starts = c.ints(1), ends = c.ints(2);
    if (c.has_input(3)) axes = c.ints(3);
    if (c.has_input(4)) steps = c.ints(4);
    if ((c.has_input(3) && !axes) || (c.has_input(4) && !steps)) starts.reset();
  }
  std::vector<InferredDim> d = *s;
  if (!starts || !ends || starts->size() != ends->size()) {
    // Which axes change is unknown unless axes are given.
    if (axes) {
      for (int64_t a : *axes)
        if (norm_axis(a, rank) >= 0) d[static_cast<size_t>(norm_axis(a, rank))] = InferredDim{};
    } else {
      d.assign(d.size(), InferredDim{});
    }
    c.set(0, c.elem(0), d);
    return;
  }
  std::vector<int64_t> ax = axes ? *axes : std::vector<int64_t>();
  if (!axes)
    for (size_t i = 0; i < starts->size(); ++i) ax.push_back(static_cast<int64_t>(i));
  std::vector<std::array<int64_t, 3>> per_axis(static_cast<size_t>(rank), {0, 0, 0});
  std::vector<bool> touched(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < ax.size() && i < starts->size(); ++i) {
    const int64_t a = norm_axis(ax[i], rank);
    if (a < 0) return;
    const int64_t step = steps && i < steps->size() ? (*steps)[i] : 1;
    if (step == 0) return;
    touched[static_cast<size_t>(a)] = true;
    const InferredDim& dim = (*s)[static_cast<size_t>(a)];
    if (!dim.known()) {
      d[static_cast<size_t>(a)] = InferredDim{};
      continue;
    }
    const int64_t n = dim.value;
    int64_t b = (*starts)[i], e = (*ends)[i];
    if (b < 0) b += n;
    if (e < 0) e += n;
    int64_t len;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, n), e = std::clamp<int64_t>(e, 0, n);
      len = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, n - 1), e = std::clamp<int64_t>(e, -1, n - 1);
      len = b > e ? (b - e + (-step) - 1) / (-step) : 0;
    }
    d[static_cast<size_t>(a)] = InferredDim::of(len);
    per_axis[static_cast<size_t>(a)] = {b, len, step};
  }
  c.set(0, c.elem(0), d);
  const InferredValue* v = c.input(0);
  if (v->values && rank == 1 && d[0].known()) {
    if (!touched[0]) {
      c.out[0].values = v->values;
      return;
    }
    std::vector<InferredDim> r;
    for (int64_t k = 0; k < per_axis[0][1]; ++k) r.push_back((*v->values)[static_cast<size_t>(per_axis[0][0] + k * per_axis[0][2])]);
    c.out[0].values = r;
  }
}

void concat(NodeCtx& c) {
  const InferredValue* first = nullptr;
  for (size_t i = 0; i < c.in.size(); ++i)
    if (c.shape(i)) first = c.input(i);
  int32_t elem = 0;
  for (size_t i = 0; i < c.in.size() && !elem; ++i) elem = c.elem(i);
  if (!first) {
    c.set(0, elem, std::nullopt);
    return;
  }
  const int64_t rank = first->rank();
  const int64_t axis = norm_axis(attr_int(c.node, "axis", c.version < 4 ? 1 : 0), rank);
  if (axis < 0) return;
  std::vector<InferredDim> d = *first->shape;
  InferredDim total = InferredDim::of(0);
  bool values = true;
  std::vector<InferredDim> vals;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const auto* s = c.shape(i);
    if (!s) {
      total = InferredDim{};
      values = false;
      continue;
    }
    if (static_cast<int64_t>(s->size()) != rank) return;
    for (size_t k = 0; k < d.size(); ++k)
      if (static_cast<int64_t>(k) != axis && d[k].unknown()) d[k] = (*s)[k];
    const InferredDim& a = (*s)[static_cast<size_t>(axis)];
    total = total.known() && a.known() ? InferredDim::of(total.value + a.value) : InferredDim{};
    if (c.input(i)->values) vals.insert(vals.end(), c.input(i)->values->begin(), c.input(i)->values->end());
    else values = false;
  }
  d[static_cast<size_t>(axis)] = total;
  c.set(0, elem, d);
  if (values && rank == 1) c.out[0].values = vals;
}

void unsqueeze(NodeCtx& c) {
  const auto* s = c.shape(0);
  const auto axes = axes_of(c, 13, 1);
  if (!s || !axes) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(s->size() + axes->size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    const int64_t k = norm_axis(a, rank);
    if (k < 0) return;
    added[static_cast<size_t>(k)] = true;
  }
  std::vector<InferredDim> d;
  size_t j = 0;
  for (int64_t k = 0; k < rank; ++k) {
    if (added[static_cast<size_t>(k)]) d.push_back(InferredDim::of(1));
    else if (j < s->size()) d.push_back((*s)[j++]);
  }
  c.set(0, c.elem(0), d);
  c.out[0].values = c.input(0)->values;
}

void squeeze(NodeCtx& c) {
  const auto* s = c.shape(0);
  const bool given = c.version < 13 ? find_attr(c.node, "axes") != nullptr : c.has_input(1);
  const auto axes = given ? axes_of(c, 13, 1) : std::nullopt;
  if (!s || (given && !axes)) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(s->size());
  std::vector<bool> gone(s->size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      const int64_t k = norm_axis(a, rank);
      if (k < 0) return;
      gone[static_cast<size_t>(k)] = true;
    }
  } else {
    for (size_t k = 0; k < s->size(); ++k) {
      if (!(*s)[k].known()) {
        c.set(0, c.elem(0), std::nullopt);
        return;
      }
      gone[k] = (*s)[k].value == 1;
    }
  }
  std::vector<InferredDim> d;
  for (size_t k = 0; k < s->size(); ++k)
    if (!gone[k]) d.push_back((*s)[k]);
  c.set(0, c.elem(0), d);
  c.out[0].values = c.input(0)->values;
}

void reshape(NodeCtx& c) {
  std::optional<std::vector<InferredDim>> target;
  if (c.version < 5) {
    if (auto a = attr_ints(c.node, "shape")) target = known_dims(*a);
  } else if (const InferredValue* v = c.input(1); v && v->values) {
    target = *v->values;
  } else if (const auto* sh = c.shape(1); sh && sh->size() == 1 && (*sh)[0].known() && (*sh)[0].value <= kMaxRank) {
    c.set(0, c.elem(0), std::vector<InferredDim>(static_cast<size_t>((*sh)[0].value)));
    return;
  }
  if (!target) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  const auto* s = c.shape(0);
  const bool allowzero = c.version >= 14 && attr_int(c.node, "allowzero", 0) != 0;
  std::vector<InferredDim> d;
  int infer_at = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const InferredDim& t = (*target)[i];
    if (t.known() && t.value == 0 && !allowzero) d.push_back(s && i < s->size() ? (*s)[i] : InferredDim{});
    else if (t.known() && t.value == -1) {
      infer_at = static_cast<int>(i);
      d.push_back(InferredDim{});
    } else if (t.known() && t.value < -1) {
      return;
    } else {
      d.push_back(t);
    }
  }
  if (infer_at >= 0 && s) {
    // The input's elements over the target's other dims, symbolic names
    // cancelling out: [N,3,4] to [N,-1] gives 12.
    std::vector<InferredDim> rest;
    for (size_t i = 0; i < d.size(); ++i)
      if (static_cast<int>(i) != infer_at) rest.push_back(d[i]);
    int64_t num = 1, den = 1;
    bool ok = true;
    std::vector<std::string> names;
    for (const auto& x : *s) {
      if (x.known()) num *= x.value;
      else if (!x.param.empty()) names.push_back(x.param);
      else ok = false;
    }
    for (const auto& x : rest) {
      if (x.known()) den *= x.value;
      else if (auto it = std::find(names.begin(), names.end(), x.param); !x.param.empty() && it != names.end()) names.erase(it);
      else ok = false;
    }
    if (ok && den > 0 && num % den == 0) {
      if (names.empty()) d[static_cast<size_t>(infer_at)] = InferredDim::of(num / den);
      else if (names.size() == 1 && num == den) d[static_cast<size_t>(infer_at)] = InferredDim::named(names[0]);
    }
  }
  c.set(0, c.elem(0), d);
  if (c.input(0) && c.input(0)->values) c.out[0].values = c.input(0)->values;
}

}  // namespace

void add_shape_rules(RuleTable& t) {
  t["Constant"] = constant;
  t["Shape"] = shape;
  t["ConstantOfShape"] = constant_of_shape;
  t["Range"] = range;
  t["Gather"] = gather;
  t["Slice"] = slice;
  t["Concat"] = concat;
  t["Unsqueeze"] = unsqueeze;
  t["Squeeze"] = squeeze;
  t["Reshape"] = reshape;
}

}  // namespace bnorm::shape_infer
