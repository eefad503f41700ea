// What the normalization matchers share (match.h): the graph queries,
// the standardization chain (x - mean) / sqrt(var + eps) and its
// root-mean-square tail, the Cast-to-float frame and the affine tail.
#include "transforms/fuse/match.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "model/attrs.h"
#include "model/op_versions.h"
#include "model/tensor_proto.h"

namespace bnorm::fuse {

namespace {

bool is_op(const onnx::NodeProto& n, const std::string& op) {
  return (n.domain().empty() || n.domain() == "ai.onnx") && (op.empty() || n.op_type() == op);
}


const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// Cast's `to` as an element type: an int from Cast-6 on, a name ("FLOAT") in Cast-1.
int32_t cast_to(const onnx::NodeProto& cast) {
  const auto* a = attr(cast, "to");
  if (!a) return 0;
  if (a->type() == onnx::AttributeProto::STRING) {
    int v = 0;
    return onnx::TensorProto_DataType_Parse(a->s(), reinterpret_cast<onnx::TensorProto_DataType*>(&v)) ? v : 0;
  }
  return static_cast<int32_t>(a->i());
}

std::string ints_text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string type_text(int32_t t) { return t == 0 ? "of unknown type" : dtype_name(static_cast<DType>(t)); }

}  // namespace

const onnx::NodeProto* Graph::producer(const std::string& v, const std::string& op) const {
  const GraphIndex::Value* val = index->find(*scope, v);
  if (!val || val->scope != scope || !val->producer || !is_op(*val->producer, op)) return nullptr;
  return val->producer;
}

std::vector<const onnx::NodeProto*> Graph::consumers(const std::string& v) const {
  std::vector<const onnx::NodeProto*> out;
  const GraphIndex::Value* val = index->find(*scope, v);
  if (!val) return out;
  for (const auto& u : val->uses)
    if (u.scope == scope && std::find(out.begin(), out.end(), u.node) == out.end()) out.push_back(u.node);
  return out;
}

bool Graph::only_read_by(const std::string& v, const std::vector<const onnx::NodeProto*>& nodes) const {
  const GraphIndex::Value* val = index->find(*scope, v);
  if (!val || val->graph_output) return false;
  for (const auto& u : val->uses)
    if (std::find(nodes.begin(), nodes.end(), u.node) == nodes.end()) return false;
  return true;
}

const onnx::NodeProto* Graph::sole_consumer(const std::string& v, const std::string& op) const {
  const GraphIndex::Value* val = index->find(*scope, v);
  if (!val || val->graph_output || val->uses.empty()) return nullptr;
  const onnx::NodeProto* n = val->uses.front().node;
  for (const auto& u : val->uses)
    if (u.node != n || u.scope != scope) return nullptr;
  return is_op(*n, op) ? n : nullptr;
}

std::optional<Tensor> Graph::constant(const std::string& v) const {
  const auto c = index->constant(*scope, v);
  if (!c) return std::nullopt;
  return decode_tensor(*c->tensor, dir);
}

std::optional<double> Graph::scalar(const std::string& v) const {
  const auto c = index->constant(*scope, v);
  if (!c || c->tensor->dims_size() > 1) return std::nullopt;
  const Tensor t = decode_tensor(*c->tensor, dir);
  if (t.numel() != 1 || !is_floating(t.dtype)) return std::nullopt;
  return t.to_f64()[0];
}

int32_t Graph::elem_type(const std::string& v) const {
  const onnx::TypeProto* t = index->declared_type(*scope, v);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

std::optional<std::vector<int64_t>> Graph::dims(const std::string& v) const {
  const onnx::TypeProto* t = index->declared_type(*scope, v);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> d;
  for (const auto& x : t->tensor_type().shape().dim()) d.push_back(x.has_dim_value() ? x.dim_value() : -1);
  return d;
}

std::optional<int64_t> Graph::rank(const std::string& v) const {
  const auto d = dims(v);
  if (!d) return std::nullopt;
  return static_cast<int64_t>(d->size());
}

std::string Graph::fresh(const std::string& stem) const {
  std::string name = stem;
  for (int i = 1; names->count(name); ++i) name = fmt::format("{}_{}", stem, i);
  names->insert(name);
  return name;
}

std::vector<const onnx::NodeProto*> Standardize::nodes() const {
  std::vector<const onnx::NodeProto*> out;
  for (const auto* n : {mean, sub, square, var, add_eps, sqrt, reciprocal, divide})
    if (n) out.push_back(n);
  return out;
}

std::optional<int64_t> trailing_count(std::vector<int64_t> axes, std::optional<int64_t> rank, std::string& why) {
  const std::string written = ints_text(axes);
  if (axes.empty()) {
    if (!rank) {
      why = "the mean is over every axis and the rank is unknown";
      return std::nullopt;
    }
    for (int64_t a = 0; a < *rank; ++a) axes.push_back(a);
  }
  if (rank) {
    for (auto& a : axes) {
      if (a < -*rank || a >= *rank) {
        why = fmt::format("axes {} are out of range for rank {}", written, *rank);
        return std::nullopt;
      }
      if (a < 0) a += *rank;
    }
  } else if (std::any_of(axes.begin(), axes.end(), [](int64_t a) { return a >= 0; })) {
    why = fmt::format("axes {} count from the front and the rank is unknown: they may not be the trailing axes", written);
    return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  const int64_t k = static_cast<int64_t>(axes.size());
  const int64_t end = rank ? *rank : 0;
  for (int64_t i = 0; i < k; ++i) {
    if (axes[i] != end - k + i) {
      why = rank ? fmt::format("axes {} are not the trailing axes of a rank-{} value", written, *rank)
                 : fmt::format("axes {} are not the trailing axes", written);
      return std::nullopt;
    }
  }
  return k;
}

std::optional<std::vector<int64_t>> mean_axes(const Graph& g, const onnx::NodeProto& rm, std::string& why) {
  if (attr_int(rm, "keepdims", 1) != 1) {
    why = fmt::format("ReduceMean '{}' has keepdims = 0", rm.output(0));
    return std::nullopt;
  }
  std::vector<int64_t> axes;
  if (rm.input_size() > 1 && !rm.input(1).empty()) {
    const auto t = g.constant(rm.input(1));
    if (!t) {
      why = fmt::format("the axes '{}' of ReduceMean '{}' are not a constant", rm.input(1), rm.output(0));
      return std::nullopt;
    }
    const auto ints = t->to_i64();
    if (!ints) {
      why = fmt::format("the axes '{}' of ReduceMean '{}' are not integers", rm.input(1), rm.output(0));
      return std::nullopt;
    }
    axes = *ints;
  } else if (const auto* a = attr(rm, "axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  if (axes.empty() && attr_int(rm, "noop_with_empty_axes", 0) != 0) {
    why = fmt::format("ReduceMean '{}' reduces nothing (noop_with_empty_axes = 1)", rm.output(0));
    return std::nullopt;
  }
  return axes;
}

std::optional<std::string> squared(const Graph& g, const onnx::NodeProto& n) {
  if (is_op(n, "Mul") && n.input_size() == 2 && n.input(0) == n.input(1)) return n.input(0);
  if (is_op(n, "Pow") && n.input_size() == 2) {
    const auto e = g.scalar(n.input(1));
    if (e && *e == 2.0) return n.input(0);
  }
  return std::nullopt;
}

StandardizeMatch match_rms_tail(const Graph& g, const onnx::NodeProto& square, const std::string& v, bool extra_outputs) {
  StandardizeMatch m;
  m.anchored = true;
  Standardize s;
  s.x = v;
  s.square = &square;
  auto fail = [&](std::string why) {
    m.why = std::move(why);
    return m;
  };
  const std::string& sq = square.output(0);
  s.var = g.sole_consumer(sq, "ReduceMean");
  if (!s.var) return fail(fmt::format("the square '{}' is not read by one ReduceMean alone", sq));
  const auto axes = mean_axes(g, *s.var, m.why);
  if (!axes) return m;
  const auto count = trailing_count(*axes, g.rank(v), m.why);
  if (!count) return m;
  s.count = *count;
  const std::string& mv = s.var->output(0);
  s.add_eps = g.sole_consumer(mv, "Add");
  if (!s.add_eps || s.add_eps->input_size() != 2) return fail(fmt::format("the mean square '{}' is not read by one Add (of epsilon) alone", mv));
  const std::string& eps = s.add_eps->input(s.add_eps->input(0) == mv ? 1 : 0);
  if (!g.index->constant(*g.scope, eps)) return fail(fmt::format("epsilon '{}' is not a constant", eps));
  const auto e = g.scalar(eps);
  if (!e) return fail(fmt::format("epsilon '{}' is not one floating-point value", eps));
  s.epsilon = *e;
  const std::string& ve = s.add_eps->output(0);
  s.sqrt = g.sole_consumer(ve, "Sqrt");
  if (!s.sqrt) return fail(fmt::format("'{}' (variance + epsilon) is not read by one Sqrt alone", ve));
  const std::string& sd = s.sqrt->output(0);
  if (const auto* d = g.sole_consumer(sd, "Div"); d && d->input_size() == 2 && d->input(0) == v && d->input(1) == sd) {
    s.divide = d;
  } else if (const auto* r = g.sole_consumer(sd, "Reciprocal")) {
    s.reciprocal = r;
    for (const auto* c : g.consumers(r->output(0))) {
      if (is_op(*c, "Mul") && c->input_size() == 2 &&
          ((c->input(0) == v && c->input(1) == r->output(0)) || (c->input(1) == v && c->input(0) == r->output(0)))) {
        s.divide = c;
      }
    }
    if (!s.divide) return fail(fmt::format("1 / sqrt '{}' is not multiplied with '{}'", r->output(0), v));
    if (!extra_outputs && !g.only_read_by(r->output(0), {s.divide})) {
      return fail(fmt::format("1 / sqrt '{}' has another reader", r->output(0)));
    }
  } else {
    return fail(fmt::format("'{}' '{}' is neither the divisor of '{}' (Div) nor inverted (Reciprocal) alone",
                            s.sqrt->op_type(), sd, v));
  }
  m.s = s;
  return m;
}

StandardizeMatch match_standardize(const Graph& g, const onnx::NodeProto& mean, bool extra_outputs) {
  StandardizeMatch m;
  if (!is_op(mean, "ReduceMean") || mean.input_size() < 1 || mean.output_size() != 1) return m;
  const std::string& x = mean.input(0);
  const std::string& mv = mean.output(0);
  const onnx::NodeProto* sub = nullptr;
  for (const auto* c : g.consumers(mv)) {
    if (is_op(*c, "Sub") && c->input_size() == 2 && c->input(0) == x && c->input(1) == mv) sub = c;
  }
  if (!sub || g.producer(sub->output(0)) != sub) return m;
  m.anchored = true;
  const auto axes = mean_axes(g, mean, m.why);
  if (!axes) return m;
  const auto count = trailing_count(*axes, g.rank(x), m.why);
  if (!count) return m;
  const std::string& d = sub->output(0);
  const onnx::NodeProto* square = nullptr;
  for (const auto* c : g.consumers(d)) {
    if (const auto v = squared(g, *c); v && *v == d) square = c;
  }
  if (!square) {
    m.why = fmt::format("x - mean '{}' is not squared (Pow 2 or Mul with itself)", d);
    return m;
  }
  StandardizeMatch tail = match_rms_tail(g, *square, d, extra_outputs);
  if (!tail.s) return tail;
  Standardize s = *tail.s;
  if (s.count != *count) {
    m.why = fmt::format("the mean is over the last {} axes and the variance over the last {}", *count, s.count);
    return m;
  }
  s.x = x;
  s.mean = &mean;
  s.sub = sub;
  if (!extra_outputs && !g.only_read_by(mv, {sub})) {
    m.why = fmt::format("the mean '{}' has another reader", mv);
    return m;
  }
  if (!g.only_read_by(d, {square, s.divide})) {
    m.why = fmt::format("x - mean '{}' has another reader", d);
    return m;
  }
  m.s = s;
  return m;
}

std::string cast_frame(const Graph& g, const Standardize& s, const std::vector<const onnx::NodeProto*>& inside,
                       CastFrame& f) {
  const int32_t kFloat = static_cast<int32_t>(DType::float32);
  f.head = g.producer(s.x, "Cast");
  if (!f.head) {
    const int32_t t = g.elem_type(s.x);
    if (t == kFloat) {
      f.x_in = s.x;
      return "";
    }
    if (t == 0) return fmt::format("the element type of '{}' is unknown", s.x);
    return fmt::format("'{}' is {}: the statistics are computed in {}, the fused op computes them in float "
                       "(stash_type 1)", s.x, type_text(t), type_text(t));
  }
  if (cast_to(*f.head) != kFloat) {
    return fmt::format("'{}' is cast to {}, the fused op computes its statistics in float (stash_type 1)", s.x,
                       type_text(cast_to(*f.head)));
  }
  f.x_in = f.head->input(0);
  const int32_t t = g.elem_type(f.x_in);
  if (t == 0) return fmt::format("the element type of '{}' is unknown", f.x_in);
  const bool floating = t == static_cast<int32_t>(DType::float16) || t == static_cast<int32_t>(DType::bfloat16) ||
                        t == static_cast<int32_t>(DType::float64) || t == kFloat;
  if (!floating) {
    return fmt::format("'{}' is {}, not a floating type: the normalization ops take float16, bfloat16, float or "
                       "double", f.x_in, type_text(t));
  }
  f.tail = g.sole_consumer(s.out(), "Cast");
  if (!f.tail || cast_to(*f.tail) != t) {
    return fmt::format("'{}' is cast to float, and the normalized value '{}' is not cast back to {} alone", f.x_in,
                       s.out(), type_text(t));
  }
  f.remove_head = g.only_read_by(s.x, inside);
  return "";
}

const onnx::NodeProto* affine_after(const Graph& g, const std::string& v, const std::string& op, const std::string& x,
                                    int64_t count, std::string& operand) {
  const onnx::NodeProto* n = g.sole_consumer(v, op);
  if (!n || n->input_size() != 2 || n->input(0) == n->input(1)) return nullptr;
  const std::string& other = n->input(n->input(0) == v ? 1 : 0);
  const auto od = g.dims(other);
  const auto xd = g.dims(x);
  if (!od || !xd || (g.elem_type(other) != 0 && g.elem_type(other) != g.elem_type(x))) return nullptr;
  const int64_t r = static_cast<int64_t>(od->size()), xr = static_cast<int64_t>(xd->size());
  if (r > xr) return nullptr;
  for (int64_t j = 0; j < r; ++j) {
    const int64_t dim = (*od)[j], xdim = (*xd)[xr - r + j];
    const bool normalized = r - j <= count;
    if (dim == 1) continue;
    if (!normalized || dim < 0 || xdim != dim) return nullptr;
  }
  operand = other;
  return n;
}

std::optional<onnx::TensorProto> ones_of_normalized_shape(const Graph& g, const std::string& x, int64_t count,
                                                          const std::string& stem) {
  const auto xd = g.dims(x);
  const int32_t t = g.elem_type(x);
  if (!xd || t == 0 || static_cast<int64_t>(xd->size()) < count) return std::nullopt;
  const std::vector<int64_t> shape(xd->end() - count, xd->end());
  for (int64_t d : shape)
    if (d < 0) return std::nullopt;
  const int64_t n = checked_numel(shape);
  Tensor ones = Tensor::from_f64(static_cast<DType>(t), shape, std::vector<double>(static_cast<size_t>(n), 1.0));
  ones.name = g.fresh(stem);
  return to_proto(ones);
}

std::string op_list(const std::vector<const onnx::NodeProto*>& nodes) {
  std::vector<std::string> ops;
  for (const auto* n : nodes) ops.push_back(n->op_type());
  return fmt::format("{}", fmt::join(ops, ", "));
}

std::string float_text(double v) { return fmt::format("{}", static_cast<float>(v)); }

}  // namespace bnorm::fuse
