#include "eval/run/inputs.h"

#include <fmt/format.h>

#include "core/error.h"

namespace bnorm::eval {

namespace {

// "a sequence" for a declared type (sequence_type, optional_type, ...).
std::string declared_kind(const onnx::TypeProto& t) {
  if (t.has_sequence_type()) return "a sequence";
  if (t.has_optional_type()) return "an optional";
  if (t.has_tensor_type()) return "a tensor";
  return "a value of another kind";
}

// A given input against a declared non-tensor type: the kinds must agree
// (a tensor or sequence given for a declared optional is taken as a
// non-empty optional), and so must a declared sequence's element type.
void check_value_input(const onnx::ValueInfoProto& vi, Value& v) {
  const auto& t = vi.type();
  if (t.has_optional_type() && v.kind != Value::Kind::optional) v = Value::some(std::move(v));
  const bool ok = t.has_sequence_type()   ? v.kind == Value::Kind::sequence
                  : t.has_optional_type() ? v.kind == Value::Kind::optional
                                          : v.is_tensor();
  if (!ok) throw Error(ErrorKind::usage, fmt::format("input '{}' is {}, the model declares {}", vi.name(), v.describe(), declared_kind(t)));
  if (!t.has_sequence_type() || !t.sequence_type().elem_type().has_tensor_type()) return;
  const auto want = static_cast<DType>(t.sequence_type().elem_type().tensor_type().elem_type());
  for (const Tensor& item : v.items) {
    if (want != DType::undefined && item.dtype != want) {
      throw Error(ErrorKind::usage, fmt::format("input '{}' holds a tensor of type {}, the model declares a sequence of {}",
                                                vi.name(), dtype_name(item.dtype), dtype_name(want)));
    }
  }
}

std::string declared_shape(const onnx::TensorShapeProto& s) {
  std::string out = "[";
  for (int i = 0; i < s.dim_size(); ++i) {
    const auto& d = s.dim(i);
    if (i) out += ", ";
    out += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return out + "]";
}

void check_input(const onnx::ValueInfoProto& vi, const Tensor& t, bool shapes) {
  if (!vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 0 && tt.elem_type() != static_cast<int32_t>(t.dtype)) {
    throw Error(ErrorKind::usage, fmt::format("input '{}' has type {}, the model declares {}", vi.name(),
                                              dtype_name(t.dtype), dtype_name(static_cast<DType>(tt.elem_type()))));
  }
  if (!shapes || !tt.has_shape()) return;
  const auto& s = tt.shape();
  bool ok = s.dim_size() == static_cast<int>(t.dims.size());
  for (int i = 0; ok && i < s.dim_size(); ++i) {
    if (s.dim(i).has_dim_value() && s.dim(i).dim_value() != t.dims[i]) ok = false;
  }
  if (!ok) {
    throw Error(ErrorKind::usage, fmt::format("input '{}' has shape {}, the model declares {}", vi.name(),
                                              shape_str(t.dims), declared_shape(s)));
  }
}

}  // namespace

void check_given_input(const onnx::ValueInfoProto& vi, Value& v, bool shapes) {
  if (vi.type().has_tensor_type() && v.is_tensor()) {
    check_input(vi, v.tensor, shapes);
  } else if (vi.has_type()) {
    check_value_input(vi, v);
  }
}

void replace_output(const std::string& name, const Tensor& with, Tensor& computed) {
  if (with.dtype != computed.dtype || with.dims != computed.dims) {
    throw Error(ErrorKind::input, fmt::format("the value replacing '{}' is {} {}, the node computes {} {}", name,
                                              dtype_name(with.dtype), shape_str(with.dims),
                                              dtype_name(computed.dtype), shape_str(computed.dims)));
  }
  computed = with;
}

}  // namespace bnorm::eval
