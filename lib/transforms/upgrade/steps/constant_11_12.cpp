// Constant 12 -> 11, the part ONNX's converter is not asked to do: a
// Constant node kept as it is across the type-only schema changes of a
// downgrade (transforms/upgrade/onnx_converter.cpp, convert_segment) must not keep version 12's
// value_float(s), value_int(s) or value_string(s), which older versions lack.
//
//   Before (12): Constant(value_floats = [1, 2])
//   After  (11): Constant(value = tensor float [2] {1, 2})
//
// Preconditions: none; other attributes (value, sparse_value) are left as
// they are. Formula: the same numbers, in the `value` tensor every version
// has (scalars for value_float / value_int / value_string, 1-D otherwise).
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

void constant_11_12_down(onnx::NodeProto& n) {
  for (int i = 0; i < n.attribute_size(); ++i) {
    const onnx::AttributeProto a = n.attribute(i);
    onnx::TensorProto t;
    if (a.name() == "value_float") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_float_data(a.f());
    } else if (a.name() == "value_floats") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_dims(a.floats_size());
      *t.mutable_float_data() = a.floats();
    } else if (a.name() == "value_int") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_int64_data(a.i());
    } else if (a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_dims(a.ints_size());
      *t.mutable_int64_data() = a.ints();
    } else if (a.name() == "value_string") {
      t.set_data_type(onnx::TensorProto::STRING);
      t.add_string_data(a.s());
    } else if (a.name() == "value_strings") {
      t.set_data_type(onnx::TensorProto::STRING);
      t.add_dims(a.strings_size());
      *t.mutable_string_data() = a.strings();
    } else {
      continue;
    }
    auto* v = n.mutable_attribute(i);
    v->Clear();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::TENSOR);
    *v->mutable_t() = std::move(t);
  }
}

}  // namespace bnorm::steps
