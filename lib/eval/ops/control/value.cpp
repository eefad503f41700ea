// Values (tensor, sequence, optional) and the control family's shared
// helpers: see op.h and control.h.
#include <cstring>

#include "core/error.h"
#include "eval/ops/control/control.h"

namespace bnorm::eval {

Value Value::of(Tensor t) {
  Value v;
  v.tensor = std::move(t);
  return v;
}

Value Value::sequence(std::vector<Tensor> items, DType elem) {
  Value v;
  v.kind = Kind::sequence;
  v.items = std::move(items);
  v.elem = elem;
  return v;
}

Value Value::none(Kind element, DType elem) {
  Value v;
  v.kind = Kind::optional;
  v.element = element;
  v.elem = elem;
  return v;
}

Value Value::some(Value inner) {
  if (inner.kind == Kind::optional) fail(ErrorKind::input, "an optional cannot hold an optional");
  const Kind element = inner.kind;
  inner.kind = Kind::optional;
  inner.element = element;
  inner.has_element = true;
  return inner;
}

Value Value::unwrapped() const {
  if (kind != Kind::optional || !has_element) return *this;
  Value v = *this;
  v.kind = element;
  v.has_element = false;
  v.element = Kind::tensor;
  return v;
}

int64_t Value::byte_size() const {
  int64_t n = static_cast<int64_t>(tensor.bytes.size());
  for (const Tensor& t : items) n += static_cast<int64_t>(t.bytes.size());
  return n;
}

std::string Value::describe() const {
  switch (kind) {
    case Kind::tensor: return "a tensor";
    case Kind::sequence: return "a sequence";
    case Kind::optional:
      if (!has_element) return "an empty optional";
      return element == Kind::sequence ? "an optional sequence" : "an optional tensor";
  }
  return "a value";
}

void OpContext::set_output(int k, Value v) const {
  if (!value_outputs || k < 0 || k >= static_cast<int>(value_outputs->size())) {
    fail(ErrorKind::unsupported, "output {} cannot hold {} here", k, v.describe());
  }
  (*value_outputs)[k] = std::move(v);
}

const Value& value_input(const OpContext& ctx, size_t i, const char* what) {
  const Value* v = ctx.value(i);
  if (!v) fail(ErrorKind::input, "missing input '{}'", what);
  return *v;
}

const Value& sequence_input(const OpContext& ctx, size_t i, const char* what) {
  const Value& v = value_input(ctx, i, what);
  if (v.kind != Value::Kind::sequence) fail(ErrorKind::input, "input '{}' must be a sequence, is {}", what, v.describe());
  return v;
}

const Tensor* tensor_input(const OpContext& ctx, size_t i, const char* what) {
  const Value* v = ctx.value(i);
  if (v && !v->is_tensor()) fail(ErrorKind::input, "input '{}' must be a tensor, is {}", what, v->describe());
  return ctx.input(i);
}

int64_t scalar_int(const Tensor& t, const char* what) {
  if (t.dtype != DType::int64 && t.dtype != DType::int32) {
    fail(ErrorKind::input, "input '{}' must be int32 or int64, is {}", what, dtype_name(t.dtype));
  }
  if (t.numel() != 1 || t.dims.size() > 1) {
    fail(ErrorKind::input, "input '{}' must be a scalar, has shape {}", what, shape_str(t.dims));
  }
  return t.dtype == DType::int64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
}

void check_total_bytes(int64_t bytes, const std::string& what) {
  if (bytes > max_tensor_bytes()) {
    fail(ErrorKind::input, "{} would hold {} bytes, over the limit of {} bytes", what, bytes, max_tensor_bytes());
  }
}

namespace {

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= d[i];
  return n;
}

}  // namespace

Tensor join_tensors(const std::vector<const Tensor*>& parts, int64_t axis, bool new_axis, const std::string& what) {
  if (parts.empty()) fail(ErrorKind::input, "{}: nothing to join", what);
  const Tensor& first = *parts[0];
  std::vector<int64_t> dims = first.dims;
  if (new_axis) dims.insert(dims.begin() + axis, 1);
  const auto rank = static_cast<int64_t>(dims.size());
  if (axis < 0 || axis >= rank) fail(ErrorKind::input, "{}: axis {} is out of range for rank {}", what, axis, rank);
  int64_t total = 0;
  for (const Tensor* p : parts) {
    std::vector<int64_t> d = p->dims;
    if (new_axis) d.insert(d.begin() + axis, 1);
    bool same = p->dtype == first.dtype && d.size() == dims.size();
    for (int64_t i = 0; same && i < rank; ++i) same = i == axis || d[i] == dims[i];
    if (!same) {
      fail(ErrorKind::input, "{}: parts of type {} shape {} and type {} shape {} cannot be joined on axis {}", what,
           dtype_name(first.dtype), shape_str(first.dims), dtype_name(p->dtype), shape_str(p->dims), axis);
    }
    total += d[axis];
  }
  dims[axis] = total;
  Tensor out(first.dtype, dims);
  const size_t es = dtype_size(first.dtype);
  const int64_t outer = product(dims, 0, axis);
  const int64_t inner = product(dims, axis + 1, dims.size()) * static_cast<int64_t>(es);
  uint8_t* dst = out.bytes.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* p : parts) {
      const int64_t along = new_axis ? 1 : p->dims[axis];
      const int64_t chunk = along * inner;
      if (chunk) std::memcpy(dst, p->bytes.data() + o * chunk, static_cast<size_t>(chunk));
      dst += chunk;
    }
  }
  return out;
}

Tensor slice_axis(const Tensor& t, int64_t axis, int64_t start, int64_t len, bool drop_axis) {
  std::vector<int64_t> dims = t.dims;
  dims[axis] = len;
  const size_t es = dtype_size(t.dtype);
  const int64_t outer = product(t.dims, 0, axis);
  const int64_t inner = product(t.dims, axis + 1, t.dims.size()) * static_cast<int64_t>(es);
  if (drop_axis) dims.erase(dims.begin() + axis);
  Tensor out(t.dtype, dims);
  const int64_t chunk = len * inner;
  for (int64_t o = 0; o < outer && chunk; ++o) {
    std::memcpy(out.bytes.data() + o * chunk, t.bytes.data() + (o * t.dims[axis] + start) * inner,
                static_cast<size_t>(chunk));
  }
  return out;
}

}  // namespace bnorm::eval
