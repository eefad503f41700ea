// The rule table (every family's ops, gathered once) and the helpers the
// rules share: reading inputs, broadcasting dims, axes.
#include "model/shape_infer/rules.h"

#include "model/tensor_proto.h"

namespace bnorm::shape_infer {

const std::vector<InferredDim>* NodeCtx::shape(size_t i) const {
  const InferredValue* v = input(i);
  return v && v->shape ? &*v->shape : nullptr;
}

const std::vector<InferredDim>* NodeCtx::input_shape_or_type() {
  const auto* s = shape(0);
  if (!s) set(0, elem(0), std::nullopt);
  return s;
}

std::optional<std::vector<int64_t>> NodeCtx::ints(size_t i) const {
  const InferredValue* v = input(i);
  if (!v || !v->values) return std::nullopt;
  std::vector<int64_t> r;
  for (const auto& d : *v->values) {
    if (!d.known()) return std::nullopt;
    r.push_back(d.value);
  }
  return r;
}

std::optional<std::vector<double>> NodeCtx::reals(size_t i) const {
  if (auto v = ints(i)) return std::vector<double>(v->begin(), v->end());
  const InferredValue* v = input(i);
  if (v && v->reals) return v->reals;
  return std::nullopt;
}

void NodeCtx::set(size_t o, int32_t elem, std::optional<std::vector<InferredDim>> s) {
  if (o >= out.size()) return;
  out[o].elem = elem;
  out[o].shape = std::move(s);
}

InferredDim broadcast_dim(const InferredDim& a, const InferredDim& b) {
  if (a.known() && a.value == 1) return b;
  if (b.known() && b.value == 1) return a;
  if (a.known()) return a;
  if (b.known()) return b;
  if (a == b) return a;
  return InferredDim{};
}

std::optional<std::vector<InferredDim>> broadcast(const std::vector<const std::vector<InferredDim>*>& shapes) {
  size_t rank = 0;
  for (const auto* s : shapes) {
    if (!s) return std::nullopt;
    rank = std::max(rank, s->size());
  }
  std::vector<InferredDim> r(rank, InferredDim::of(1));
  for (const auto* s : shapes) {
    const size_t off = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) r[off + i] = broadcast_dim(r[off + i], (*s)[i]);
  }
  return r;
}

int64_t norm_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

int64_t known_product(const std::vector<InferredDim>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) {
    if (!d[i].known()) return -1;
    p *= d[i].value;
  }
  return p;
}

std::vector<InferredDim> known_dims(const std::vector<int64_t>& v) {
  std::vector<InferredDim> r;
  for (int64_t x : v) r.push_back(InferredDim::of(x));
  return r;
}

bool is_index_type(int32_t elem) {
  return elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32 || elem == onnx::TensorProto::BOOL;
}

void read_constant(const onnx::TensorProto& t, InferredValue& v) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n > kMaxPropagated || is_external(t)) return;
  const int32_t e = t.data_type();
  try {
    if (is_index_type(e)) {
      if (auto i = decode_tensor(t).to_i64()) v.values = known_dims(*i);
    } else if (e == onnx::TensorProto::FLOAT || e == onnx::TensorProto::DOUBLE || e == onnx::TensorProto::FLOAT16 ||
               e == onnx::TensorProto::BFLOAT16) {  // bfloat16: Range-27's
      v.reals = decode_tensor(t).to_f64();
    }
  } catch (const std::exception&) {
  }
}

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
    add_elementwise_rules(t);
    add_tensor_rules(t);
    add_shape_rules(t);
    add_nn_rules(t);
    add_reduce_rules(t);
    add_control_rules(t);
    add_rnn_rules(t);
    add_image_rules(t);
    add_math_rules(t);
    add_signal_rules(t);
    return t;
  }();
  return table;
}

}  // namespace bnorm::shape_infer
