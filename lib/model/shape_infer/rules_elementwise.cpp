// Rules of the ops whose output has their input's shape, or the broadcast
// of their inputs' shapes: unary math and activations, the normalizations,
// binary and variadic arithmetic (legacy `broadcast` below opset 7: the
// first input's shape), comparisons and logic (bool), Where, Clip, Cast,
// CastLike, Dropout, quantization. Arithmetic on propagated integer values
// (Add, Sub, Mul, Div, Neg, Cast between integer types) keeps the values.
#include <cmath>
#include <functional>

#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

constexpr int32_t kBool = onnx::TensorProto::BOOL;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

std::optional<std::vector<InferredDim>> shape_of(const NodeCtx& c, size_t i) {
  if (const auto* s = c.shape(i)) return *s;
  return std::nullopt;
}

void same_as_input(NodeCtx& c) {
  c.set(0, c.elem(0), shape_of(c, 0));
}

// Output 0 broadcast from every present input; type of input `type_from`
// or `elem` when set.
void broadcast_all(NodeCtx& c, size_t type_from, int32_t elem = 0) {
  std::vector<const std::vector<InferredDim>*> shapes;
  for (size_t i = 0; i < c.in.size(); ++i)
    if (c.has_input(i)) shapes.push_back(c.shape(i));
  c.set(0, elem ? elem : c.elem(type_from), broadcast(shapes));
}

// The binary ops that had a `broadcast` attribute before opset 7: there the
// output has the first input's shape.
void binary(NodeCtx& c, int32_t elem, int legacy_until) {
  if (c.version < legacy_until) {
    c.set(0, elem ? elem : c.elem(0), shape_of(c, 0));
    return;
  }
  broadcast_all(c, 0, elem);
}

// Arithmetic on propagated values, scalars against vectors or equal
// lengths: integers (symbolic dims through add/mul by 0 and 1) into
// `values`, floating constants into `reals`.
template <typename F, typename R>
void propagate(NodeCtx& c, F f, R real) {
  const InferredValue *a = c.input(0), *b = c.input(1);
  if (!a || !b) return;
  if (a->values && b->values && is_index_type(c.out[0].elem)) {
    const auto &x = *a->values, &y = *b->values;
    const size_t n = std::max(x.size(), y.size());
    if ((x.size() != n && x.size() != 1) || (y.size() != n && y.size() != 1)) return;
    std::vector<InferredDim> r;
    for (size_t i = 0; i < n; ++i) r.push_back(f(x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i]));
    c.out[0].values = r;
    return;
  }
  const auto x = c.reals(0), y = c.reals(1);
  if (!x || !y || is_index_type(c.out[0].elem)) return;
  const size_t n = std::max(x->size(), y->size());
  if ((x->size() != n && x->size() != 1) || (y->size() != n && y->size() != 1)) return;
  std::vector<double> r;
  for (size_t i = 0; i < n; ++i) r.push_back(real((*x)[x->size() == 1 ? 0 : i], (*y)[y->size() == 1 ? 0 : i]));
  c.out[0].reals = r;
}

InferredDim max_dim(const InferredDim& p, const InferredDim& q) {
  return p.known() && q.known() ? InferredDim::of(std::max(p.value, q.value)) : InferredDim{};
}

InferredDim min_dim(const InferredDim& p, const InferredDim& q) {
  return p.known() && q.known() ? InferredDim::of(std::min(p.value, q.value)) : InferredDim{};
}

InferredDim equal_dim(const InferredDim& p, const InferredDim& q) {
  if (p.known() && q.known()) return InferredDim::of(p.value == q.value);
  if (!p.param.empty() && p.param == q.param) return InferredDim::of(1);
  return {};
}

InferredDim add(const InferredDim& p, const InferredDim& q) {
  if (p.known() && q.known()) return InferredDim::of(p.value + q.value);
  if (p.known() && p.value == 0) return q;
  if (q.known() && q.value == 0) return p;
  return {};
}

InferredDim mul(const InferredDim& p, const InferredDim& q) {
  if (p.known() && q.known()) return InferredDim::of(p.value * q.value);
  if (p.known() && p.value == 1) return q;
  if (q.known() && q.value == 1) return p;
  return {};
}

InferredDim sub(const InferredDim& p, const InferredDim& q) {
  if (p.known() && q.known()) return InferredDim::of(p.value - q.value);
  if (q.known() && q.value == 0) return p;
  return {};
}

InferredDim div(const InferredDim& p, const InferredDim& q) {
  if (p.known() && q.known() && q.value != 0) {
    int64_t d = p.value / q.value;  // ONNX's integer Div truncates, as C++ does
    return InferredDim::of(d);
  }
  if (q.known() && q.value == 1) return p;
  return {};
}

int32_t cast_to(const NodeCtx& c) {
  const auto* a = find_attr(c.node, "to");
  if (!a) return 0;
  if (a->type() == onnx::AttributeProto::STRING || (!a->has_i() && a->has_s())) {
    onnx::TensorProto::DataType t;
    return onnx::TensorProto::DataType_Parse(a->s(), &t) ? t : 0;
  }
  return static_cast<int32_t>(attr_int(*a));
}

// Values through Cast: integers stay integers, become reals for a floating
// type; whole reals become integers.
void cast_values(NodeCtx& c) {
  const int32_t to = c.out[0].elem;
  if (!c.input(0)) return;
  if (is_index_type(to)) {
    if (is_index_type(c.elem(0))) {
      c.out[0].values = c.input(0)->values;
    } else if (const auto r = c.reals(0)) {
      std::vector<InferredDim> v;
      for (double x : *r)  // Cast truncates; to bool: non-zero
        v.push_back(InferredDim::of(to == kBool ? x != 0 : static_cast<int64_t>(x)));
      c.out[0].values = v;
    }
  } else if (to == kFloat || to == onnx::TensorProto::DOUBLE || to == onnx::TensorProto::FLOAT16) {
    c.out[0].reals = c.reals(0);
  }
}

}  // namespace

void add_elementwise_rules(RuleTable& t) {
  // Unary ops that keep a propagated value computable (Range's expansion:
  // Ceil, Relu on its element count).
  for (auto [op, f] : std::initializer_list<std::pair<const char*, double (*)(double)>>{
           {"Ceil", [](double x) { return std::ceil(x); }},
           {"Floor", [](double x) { return std::floor(x); }},
           {"Relu", [](double x) { return std::max(x, 0.0); }},
           {"Abs", [](double x) { return std::fabs(x); }}}) {
    t[op] = [f = f](NodeCtx& c) {
      same_as_input(c);
      const auto r = c.reals(0);
      if (!r) return;
      std::vector<double> y;
      for (double x : *r) y.push_back(f(x));
      if (is_index_type(c.out[0].elem)) {
        std::vector<InferredDim> v;
        for (double x : y) v.push_back(InferredDim::of(static_cast<int64_t>(x)));
        c.out[0].values = v;
      } else {
        c.out[0].reals = y;
      }
    };
  }
  for (const char* op :
       {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cos", "Cosh", "Elu", "Erf", "Exp",
        "Gelu", "HardSigmoid", "HardSwish", "Hardmax", "LeakyRelu", "Log", "LogSoftmax", "Mish", "Reciprocal",
        "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softmax", "Softplus", "Softsign", "Sqrt", "Tan",
        "Tanh", "ThresholdedRelu", "Celu", "Shrink", "BitwiseNot", "Not", "LpNormalization", "LRN",
        "MeanVarianceNormalization", "InstanceNormalization", "CumSum", "Trilu", "ReverseSequence", "Swish",
        "Clip", "PRelu", "Scatter", "ScatterElements", "ScatterND", "Binarizer",
        // the experimental ops of opsets 1..9 (WinML's models)
        "Affine", "ImageScaler", "ParametricSoftplus", "Scale", "ScaledTanh"}) {
    t[op] = same_as_input;
  }
  // Ops of opsets 24..28 whose output 0 is input 0's shape and type (upgrade's lowering reads a Swish's input
  // type when a SwiGLU makes it): CumProd's y, SwiGLU's Y (A and B have one shape), TensorScatter's present_cache.
  for (const char* op : {"CumProd", "SwiGLU", "TensorScatter"}) t[op] = same_as_input;
  // Crop (experimental, 1..9): X [N, C, H, W], border (left, top, right, bottom), scale (height, width):
  // [N, C, height, width] with scale, else [N, C, H - top - bottom, W - left - right].
  t["Crop"] = [](NodeCtx& c) {
    const auto* x = c.shape(0);
    const auto* border = find_attr(c.node, "border");
    const auto* scale = find_attr(c.node, "scale");
    if (!x || x->size() != 4 || !border || border->ints_size() != 4 || (scale && scale->ints_size() != 2)) {
      c.set(0, c.elem(0), std::nullopt);
      return;
    }
    std::vector<InferredDim> d{(*x)[0], (*x)[1]};
    for (int k = 0; k < 2; ++k) {
      const InferredDim& in = (*x)[static_cast<size_t>(2 + k)];
      const int64_t cut = border->ints(1 - k) + border->ints(3 - k);  // top + bottom, left + right
      if (scale) d.push_back(InferredDim::of(scale->ints(k)));
      else d.push_back(in.known() && in.value - cut >= 0 ? InferredDim::of(in.value - cut) : InferredDim{});
    }
    c.set(0, c.elem(0), d);
  };
  t["Identity"] = [](NodeCtx& c) {
    if (c.input(0)) c.out[0] = *c.input(0);
  };
  t["Neg"] = [](NodeCtx& c) {
    same_as_input(c);
    if (c.input(0) && c.input(0)->values) {
      auto v = *c.input(0)->values;
      for (auto& d : v) d = d.known() ? InferredDim::of(-d.value) : InferredDim{};
      c.out[0].values = v;
    }
  };
  t["IsNaN"] = t["IsInf"] = t["RegexFullMatch"] = [](NodeCtx& c) { c.set(0, kBool, shape_of(c, 0)); };
  t["StringConcat"] = [](NodeCtx& c) { broadcast_all(c, 0); };
  t["OptionalHasElement"] = [](NodeCtx& c) { c.set(0, kBool, std::vector<InferredDim>{}); };
  t["Cast"] = [](NodeCtx& c) {
    c.set(0, cast_to(c), shape_of(c, 0));
    cast_values(c);
  };
  // BitCast-26: the same bits as the type `to` names; bnorm holds only equal widths, so the shape stays.
  t["BitCast"] = [](NodeCtx& c) { c.set(0, cast_to(c), shape_of(c, 0)); };
  t["CastLike"] = [](NodeCtx& c) {
    c.set(0, c.elem(1), shape_of(c, 0));
    cast_values(c);
  };
  t["Add"] = [](NodeCtx& c) { binary(c, 0, 7); propagate(c, add, std::plus<double>()); };
  t["Sub"] = [](NodeCtx& c) { binary(c, 0, 7); propagate(c, sub, std::minus<double>()); };
  t["Mul"] = [](NodeCtx& c) { binary(c, 0, 7); propagate(c, mul, std::multiplies<double>()); };
  t["Div"] = [](NodeCtx& c) { binary(c, 0, 7); propagate(c, div, std::divides<double>()); };
  t["Pow"] = [](NodeCtx& c) { binary(c, 0, 7); };
  t["Mod"] = t["BitShift"] = t["BitwiseAnd"] = t["BitwiseOr"] = t["BitwiseXor"] = [](NodeCtx& c) { binary(c, 0, 7); };
  for (const char* op : {"And", "Or", "Xor", "Greater", "Less"})
    t[op] = [](NodeCtx& c) { binary(c, kBool, 7); };
  t["Equal"] = [](NodeCtx& c) {
    binary(c, kBool, 7);
    propagate(c, equal_dim, [](double x, double y) { return x == y ? 1.0 : 0.0; });
  };
  t["GreaterOrEqual"] = t["LessOrEqual"] = [](NodeCtx& c) { binary(c, kBool, 7); };
  t["Sum"] = t["Mean"] = [](NodeCtx& c) { broadcast_all(c, 0); };
  t["Max"] = [](NodeCtx& c) {
    broadcast_all(c, 0);
    if (c.in.size() == 2) propagate(c, max_dim, [](double x, double y) { return std::max(x, y); });
  };
  t["Min"] = [](NodeCtx& c) {
    broadcast_all(c, 0);
    if (c.in.size() == 2) propagate(c, min_dim, [](double x, double y) { return std::min(x, y); });
  };
  t["Where"] = [](NodeCtx& c) { broadcast_all(c, 1); };
  t["Dropout"] = [](NodeCtx& c) {
    same_as_input(c);
    c.set(1, c.version >= 10 ? kBool : c.elem(0), shape_of(c, 0));
  };
  t["BatchNormalization"] = [](NodeCtx& c) {
    same_as_input(c);
    for (size_t o = 1; o < c.out.size(); ++o) {
      const size_t from = c.version >= 14 ? 3 + (o - 1) % 2 : 1;  // running mean/var have the mean's type
      c.set(o, c.elem(from), shape_of(c, 1));
    }
  };
  // Mean and InvStdDev: the input's shape with the normalized axes set to 1, stash_type (float) .
  auto stats_from_axis = [](NodeCtx& c, int64_t axis) {
    same_as_input(c);
    const auto* s = c.shape(0);
    if (!s || c.out.size() < 2) return;
    const int64_t a = norm_axis(axis, static_cast<int64_t>(s->size()));
    if (a < 0) return;
    std::vector<InferredDim> d = *s;
    for (size_t i = static_cast<size_t>(a); i < d.size(); ++i) d[i] = InferredDim::of(1);
    const int32_t stash = static_cast<int32_t>(attr_int(c.node, "stash_type", kFloat));
    for (size_t o = 1; o < c.out.size(); ++o) c.set(o, stash, d);
  };
  t["LayerNormalization"] = [stats_from_axis](NodeCtx& c) { stats_from_axis(c, attr_int(c.node, "axis", -1)); };
  t["RMSNormalization"] = [](NodeCtx& c) { same_as_input(c); };
  t["GroupNormalization"] = same_as_input;
  t["QuantizeLinear"] = [](NodeCtx& c) {
    int32_t e = c.has_input(2) ? c.elem(2) : onnx::TensorProto::UINT8;
    if (const auto* a = find_attr(c.node, "output_dtype"); a && attr_int(*a) != 0) e = static_cast<int32_t>(attr_int(*a));
    c.set(0, e, shape_of(c, 0));
  };
  t["DequantizeLinear"] = [](NodeCtx& c) {
    int32_t e = c.version >= 19 ? c.elem(1) : kFloat;
    if (const auto* a = find_attr(c.node, "output_dtype"); a && attr_int(*a) != 0) e = static_cast<int32_t>(attr_int(*a));
    c.set(0, e, shape_of(c, 0));
  };
  t["Size"] = [](NodeCtx& c) {
    c.set(0, kInt64, std::vector<InferredDim>{});
    if (const auto* s = c.shape(0)) {
      const int64_t n = known_product(*s, 0, s->size());
      if (n >= 0) c.out[0].values = std::vector<InferredDim>{InferredDim::of(n)};
    }
  };
}

}  // namespace bnorm::shape_infer
