// The closed sets of values some string attributes take, by op and schema
// version (ONNX 1.23's Changelog): Resize's modes, Pad's mode, Scatter's
// reduction, GridSample's and Upsample's modes. One table, read by the
// evaluator (a node whose value its version lacks is refused, never run
// with another version's meaning), by upgrade's check of its input and of
// every model it writes, and checked against the table of schema changes'
// `value` rows (tests). An attribute not listed takes any string.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <vector>

namespace bnorm {

// The values `attr` of `op` may take at schema version `version`, or nullptr
// when the table does not list the attribute there.
const std::vector<std::string>* allowed_attr_values(std::string_view op, std::string_view attr, int version);

// Why a string attribute of default-domain node `n`, read at schema version
// `version`, holds a value its version does not define ("'x' is not a
// coordinate_transformation_mode of Resize-13 (it is one of ...)"), or "".
std::string attr_value_problem(const onnx::NodeProto& n, int version);

}  // namespace bnorm
