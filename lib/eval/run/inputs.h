// The inputs given to a graph against what it declares (evaluator.cpp):
// element type and, with `shapes`, static dims of a tensor; the kind
// (tensor, sequence, optional) and a sequence's element type otherwise. A
// tensor or sequence given for a declared optional becomes a non-empty
// optional. Error(usage) naming the input and both sides.
#pragma once

#include <onnx/onnx_pb.h>

#include "eval/run/op.h"

namespace bnorm::eval {

void check_given_input(const onnx::ValueInfoProto& declared, Value& given, bool shapes);

}  // namespace bnorm::eval
