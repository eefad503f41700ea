// Every schema of the default ONNX domain (ONNX 1.23's Changelog.md, opsets
// 1..28), as bnorm upgrade reads it: input/output counts, attributes, and
// the element types each input and output allows. Generated into
// transforms/upgrade/steps/schema_table.inc by transforms/upgrade/steps/gen_schema_table.py.
//
// Used where ONNX 1.12 knows nothing (opsets 18+): check_schema() is the
// check bnorm runs on every node it writes at 18+ instead of ONNX's
// checker, and type_problem() the element-type check of a node crossing a
// type-only schema change (versions.h) at any opset.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bnorm {

struct SchemaValue {
  std::string name;
  bool optional = false, variadic = false;
  std::string type;  // a type parameter ("T") or a fixed type ("tensor(int64)")
};

struct OpSchemaInfo {
  std::string op;
  int version = 0;
  int min_in = 0, max_in = 0, min_out = 0, max_out = 0;  // max -1: any number
  std::vector<std::pair<std::string, bool>> attrs;       // name, required
  std::vector<SchemaValue> inputs, outputs;
  std::vector<std::pair<std::string, std::vector<std::string>>> types;  // "T" -> {"tensor(float)", ...}

  bool has_attr(std::string_view name) const;
  // The types input (or output) `i` may have; empty when not known (not a tensor, or no such slot).
  std::vector<std::string> allowed(bool input, int i) const;
};

// The schema of `op` at schema version `version` (a since-version), or nullptr.
const OpSchemaInfo* schema_info(std::string_view op, int version);

// "tensor(float)", "tensor(float8e4m3fn)", ... for an ONNX element type; "" for undefined.
std::string tensor_type_name(int32_t elem_type);

// The IR version an element type first appeared in (float8: 9, 4-bit
// integers: 10, float4e2m1: 11; 3 for the rest).
int64_t ir_version_of_type(int32_t elem_type);

// A value's type as the Changelog writes it: "tensor(float)",
// "seq(tensor(int64))", "optional(tensor(float))"; "" when unknown (or a
// tensor of unknown element type).
std::string type_text(const onnx::TypeProto& t);

// The type of a value, when known, as type_text writes it ("": unknown).
using TypeOf = std::function<std::string(const std::string&)>;

// Why `n` does not fit `schema` (input/output counts, unknown or missing
// required attributes, element types where `type_of` knows them), or "".
std::string check_schema(const onnx::NodeProto& n, const OpSchemaInfo& schema, const TypeOf& type_of);

// Why `n`'s element types do not all exist in `schema`, or "" (only the types).
std::string type_problem(const onnx::NodeProto& n, const OpSchemaInfo& schema, const TypeOf& type_of);

}  // namespace bnorm
