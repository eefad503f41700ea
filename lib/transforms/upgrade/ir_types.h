// What IR version and element types a target opset means: the IR version a
// model at an opset needs, and the element types of a model that no op has
// at a target (a blocker listed before anything converts).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bnorm {

// The IR version a model at `opset` needs (ONNX's table: opsets 1-8 -> 3,
// 9 -> 4, 10 -> 5, 11 -> 6, 12-14 -> 7, 15-18 -> 8, 19-20 -> 9, 21-22 -> 10, 23 -> 11, 24 -> 12,
// 25..28 -> 13).
int64_t required_ir_version(int64_t opset);

// The element types declared in `m` (graph inputs/outputs, value_info,
// initializers, Constant values) that no op has at opset `to` (float8
// before 19, int4/uint4 before 21, float4e2m1 before 23), one line each
// naming where and the type; and the IR version those types need
// (float8: 9, int4: 10, float4e2m1: 11; else 3).
std::vector<std::string> type_blockers(const onnx::ModelProto& m, int64_t to);
int64_t model_types_ir(const onnx::ModelProto& m);

}  // namespace bnorm
