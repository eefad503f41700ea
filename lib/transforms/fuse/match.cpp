// What the normalization matchers share (match.h): the graph queries
// (each seeing identical copies as one node: copies.cpp), the Cast-to-float
// frame, the affine tail and the report's texts. The standardization
// chain is in standardize.cpp.
#include "transforms/fuse/match.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/attrs.h"
#include "model/op_versions.h"
#include "model/tensor_proto.h"

namespace bnorm::fuse {

namespace {

// Cast's `to` as an element type: an int from Cast-6 on, a name ("FLOAT") in Cast-1.
int32_t cast_to(const onnx::NodeProto& cast) {
  const auto* a = find_attr(cast, "to");
  if (!a) return 0;
  if (a->type() == onnx::AttributeProto::STRING) {
    int v = 0;
    return onnx::TensorProto_DataType_Parse(a->s(), reinterpret_cast<onnx::TensorProto_DataType*>(&v)) ? v : 0;
  }
  return static_cast<int32_t>(a->i());
}

std::string type_text(int32_t t) { return t == 0 ? "of unknown type" : dtype_name(static_cast<DType>(t)); }

// `n` is one of `nodes`, or a copy of one.
bool among(const Graph& g, const onnx::NodeProto* n, const std::vector<const onnx::NodeProto*>& nodes) {
  const onnx::NodeProto* first = g.copies_of(n).front();
  return std::any_of(nodes.begin(), nodes.end(), [&](const auto* m) { return m && g.copies_of(m).front() == first; });
}

}  // namespace

bool is_op(const onnx::NodeProto& n, const std::string& op) {
  return (n.domain().empty() || n.domain() == "ai.onnx") && (op.empty() || n.op_type() == op);
}

const onnx::NodeProto* Graph::producer(const std::string& v, const std::string& op) const {
  const GraphIndex::Value* val = index->find(*scope, v);
  if (!val || val->scope != scope || !val->producer || !is_op(*val->producer, op)) return nullptr;
  return val->producer;
}

std::vector<const onnx::NodeProto*> Graph::consumers(const std::string& v) const {
  std::vector<const onnx::NodeProto*> out;
  for (const auto& name : names_of(v)) {
    const GraphIndex::Value* val = index->find(*scope, name);
    if (!val) continue;
    for (const auto& u : val->uses) {
      const onnx::NodeProto* first = copies_of(u.node).front();
      if (u.scope == scope && std::find(out.begin(), out.end(), first) == out.end()) out.push_back(first);
    }
  }
  return out;
}

bool Graph::only_read_by(const std::string& v, const std::vector<const onnx::NodeProto*>& nodes) const {
  for (const auto& name : names_of(v)) {
    const GraphIndex::Value* val = index->find(*scope, name);
    if (!val || val->graph_output) return false;
    for (const auto& u : val->uses)
      if (!among(*this, u.node, nodes)) return false;
  }
  return true;
}

const onnx::NodeProto* Graph::sole_consumer(const std::string& v, const std::string& op) const {
  const onnx::NodeProto* n = nullptr;
  for (const auto& name : names_of(v)) {
    const GraphIndex::Value* val = index->find(*scope, name);
    if (!val || val->graph_output) return nullptr;
    for (const auto& u : val->uses) {
      const onnx::NodeProto* first = copies_of(u.node).front();
      if (u.scope != scope || (n && first != n)) return nullptr;
      n = first;
    }
  }
  return n && is_op(*n, op) ? n : nullptr;
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

std::optional<double> Graph::number(const std::string& v) const {
  const auto c = index->constant(*scope, v);
  if (!c || c->tensor->dims_size() > 1) return std::nullopt;
  const Tensor t = decode_tensor(*c->tensor, dir);
  if (t.numel() != 1 || t.dtype == DType::boolean || dtype_size(t.dtype) == 0) return std::nullopt;
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

bool spans_normalized(const Graph& g, const std::string& operand, const std::string& x, int64_t count) {
  const auto od = g.dims(operand);
  const auto xd = g.dims(x);
  if (!od || !xd || (g.elem_type(operand) != 0 && g.elem_type(operand) != g.elem_type(x))) return false;
  const int64_t r = static_cast<int64_t>(od->size()), xr = static_cast<int64_t>(xd->size());
  if (r > xr) return false;
  for (int64_t j = 0; j < r; ++j) {
    const int64_t dim = (*od)[j], xdim = (*xd)[xr - r + j];
    const bool normalized = r - j <= count;
    if (dim == 1) continue;
    if (!normalized || dim < 0 || xdim != dim) return false;
  }
  return true;
}

const onnx::NodeProto* affine_after(const Graph& g, const std::string& v, const std::string& op, const std::string& x,
                                    int64_t count, std::string& operand) {
  const onnx::NodeProto* n = g.sole_consumer(v, op);
  if (!n || n->input_size() != 2 || g.same(n->input(0), n->input(1))) return nullptr;
  const std::string& other = n->input(g.same(n->input(0), v) ? 1 : 0);
  if (!spans_normalized(g, other, x, count)) return nullptr;
  operand = other;
  return n;
}

const onnx::NodeProto* scale_of(const Graph& g, const Standardize& s, const std::string& y, const std::string& x,
                                std::string& scale, std::string& why) {
  if (s.scale.empty()) return affine_after(g, y, "Mul", x, s.count, scale);
  if (!spans_normalized(g, s.scale, x, s.count)) {
    why = fmt::format("the scale '{}' applied to 1 / sqrt is not of the type of '{}' with a known shape spanning its "
                      "last {} axes only", s.scale, x, s.count);
  } else {
    scale = s.scale;
  }
  return nullptr;
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

std::string ints_text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

}  // namespace bnorm::fuse
