// Constant 9 -> 1..8 with a value Constant-1 cannot hold.
//
//   Constant-1: Constant() value (float16, float, double tensors only)
//   Constant-9+: any element type (value, or value_int(s)/value_string(s) from 12)
//
// Down below 9, a value of another type (int64, bool, string, ...) becomes
// an initializer, read by an Identity (Identity-1 takes every type) that
// keeps the Constant's output name:
//   Before: Constant() value = int64 [3] -> c
//   After:  initializer c_value (int64 [3]);  Identity(c_value) -> c
// ONNX's checker refuses such a Constant ("output has unsupported type
// tensor(int64)"). Formula: the same values.
#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

// The value of a Constant of any version as a tensor; nullopt for sparse_value.
std::optional<onnx::TensorProto> constant_value(const onnx::NodeProto& n) {
  onnx::TensorProto t;
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) return a.t();
    if (a.name() == "value_int" || a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      if (a.name() == "value_ints") t.add_dims(a.ints_size());
      if (a.name() == "value_int") t.add_int64_data(a.i());
      for (int64_t v : a.ints()) t.add_int64_data(v);
      return t;
    }
    if (a.name() == "value_string" || a.name() == "value_strings") {
      t.set_data_type(onnx::TensorProto::STRING);
      if (a.name() == "value_strings") t.add_dims(a.strings_size());
      if (a.name() == "value_string") t.add_string_data(a.s());
      for (const auto& v : a.strings()) t.add_string_data(v);
      return t;
    }
  }
  return std::nullopt;
}

bool constant_needs_initializer(const onnx::NodeProto& n) {
  const auto t = constant_value(n);
  if (!t) return false;
  const int32_t type = t->data_type();
  return type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::FLOAT16 && type != onnx::TensorProto::DOUBLE;
}

void constant_9_down(NormSite& s) {
  onnx::TensorProto t = *constant_value(s.node);
  t.set_name(s.fresh(s.node.output(0) + "_value"));
  s.initializers.push_back(t);
  onnx::NodeProto id;
  id.set_op_type("Identity");
  id.set_name(s.node.name());
  id.add_input(t.name());
  id.add_output(s.node.output(0));
  s.node = id;
  s.report.set.push_back(fmt::format("value as initializer '{}', read by an Identity", t.name()));
  s.version = 1;
}

namespace {

void keep(NormSite&) {}  // up across 9 only types were added

bool constant_9_applies(const onnx::NodeProto& n, int64_t from, int64_t to) {
  return to < 9 && from >= 9 && constant_needs_initializer(n);
}

}  // namespace

const Step constant_9{"constant_9", "constant_9", keep, constant_9_down, constant_9_applies};

}  // namespace bnorm::steps
