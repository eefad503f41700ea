// Shape inference without failing: ONNX's shape inference on a copy of the
// model, used where types and shapes help (inspect, fold's MatMul rank
// check, upgrade). Models it cannot infer come back with what they
// declared, and the reason is logged at debug level.
#pragma once

#include <onnx/onnx_pb.h>

namespace bnorm {

onnx::ModelProto with_inferred_shapes(const onnx::ModelProto& model);

}  // namespace bnorm
