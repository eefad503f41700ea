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

// EvalOptions::replace: `computed`, node output `name`, becomes `with`,
// which must have its type and shape (Error(input) naming both otherwise).
void replace_output(const std::string& name, const Tensor& with, Tensor& computed);

}  // namespace bnorm::eval
