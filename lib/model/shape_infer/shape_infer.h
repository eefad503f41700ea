// bnorm's own shape and type inference, opsets 1 to 23, for where ONNX
// 1.12's stops (every op version above 17) or leaves a rank or dim unknown.
//
// For every value of every graph (subgraphs included) it computes the
// element type, the rank and the dims (a known size, a symbolic name, or
// unknown) and, for small integer tensors (at most kMaxPropagated
// elements, int64/int32), their values: data propagation, so that
// Reshape(x, Concat(Gather(Shape(x), 0), [-1])) has a known shape.
//
// Contract: it starts from what the model declares (graph inputs,
// initializers, value_info, graph outputs) and never contradicts a
// declaration: a declared dim is kept, an inferred one only fills what is
// unknown there; a contradiction keeps the declared and is logged at debug.
// It never throws on a strange model: a node its rules do not cover, or
// whose inputs make no sense, leaves its outputs unknown. The rules live in
// rules_*.cpp, one function per op behaviour, looked up by op name with the
// schema version from the op table (model/op_versions.h).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bnorm {

// One dim, or one element of a propagated integer tensor: a number
// (has_value; a dim is >= 0, an element may be negative), a symbolic name,
// or unknown (neither).
struct InferredDim {
  int64_t value = 0;
  bool has_value = false;
  std::string param;
  bool known() const { return has_value; }
  bool unknown() const { return !has_value && param.empty(); }
  static InferredDim of(int64_t v) { return InferredDim{v, true, {}}; }
  static InferredDim named(std::string p) { return InferredDim{0, false, std::move(p)}; }
  bool operator==(const InferredDim& o) const {
    return has_value == o.has_value && (has_value ? value == o.value : param == o.param);
  }
  bool operator!=(const InferredDim& o) const { return !(*this == o); }
};

struct InferredValue {
  int32_t elem = 0;                                 // TensorProto::DataType; 0: unknown
  std::optional<std::vector<InferredDim>> shape;    // nullopt: rank unknown
  std::optional<std::vector<InferredDim>> values;   // a small integer tensor's elements, row-major
  std::optional<std::vector<double>> reals;          // a small floating constant's elements (Resize's scales)
  bool has_rank() const { return shape.has_value(); }
  int rank() const { return shape ? static_cast<int>(shape->size()) : -1; }
  // Every dim a known size.
  bool fully_known() const;
  // "float32[N,3,?]" / "int64[?]" / "?" (rank unknown).
  std::string text() const;
};

inline constexpr int64_t kMaxPropagated = 64;

// What bnorm's inference found, by graph (GraphProto address, for the
// model passed in) and value name.
using GraphShapes = std::map<std::string, InferredValue>;
using ModelShapes = std::map<const onnx::GraphProto*, GraphShapes>;

// bnorm's rules alone over `model` (which must outlive the result).
ModelShapes infer_model_shapes(const onnx::ModelProto& model);

// Writes `shapes` (computed on `model`) into the model's value_info (values
// with a known element type), and with `outputs` into graph outputs whose
// declared shape is less complete: each dim known there stays, unknown
// ones are filled.
enum class WriteOutputs { no, yes };
void write_inferred_shapes(onnx::ModelProto& model, const ModelShapes& shapes, WriteOutputs outputs = WriteOutputs::yes);

// ONNX 1.12's shape inference (model/infer.h), then bnorm's filling what it
// left unknown: the copy every reader of shapes uses (upgrade's site walker,
// inspect, fold's rank checks, the conversion at <= 17, which passes `no`:
// its copy becomes the output model, whose graph outputs keep what ONNX's
// inference gives them).
onnx::ModelProto with_all_inferred_shapes(const onnx::ModelProto& model, WriteOutputs outputs = WriteOutputs::yes);

// Conversions between the proto forms and InferredValue.
InferredValue from_type(const onnx::TypeProto& t);
void to_type(const InferredValue& v, onnx::TypeProto* t);

}  // namespace bnorm
