// Shared by the control-flow family (ops_control*.cpp): registration of
// its parts, reading sequence and optional inputs, and the byte-copying
// tensor moves (concatenate, stack, slice) that Loop, Scan, SplitToSequence
// and ConcatFromSequence are made of. Moves copy elements unchanged, so
// every element type bnorm holds is supported.
#pragma once

#include <string>
#include <vector>

#include "eval/run/op.h"

namespace bnorm::eval {

void add_sequence_ops(OpRegistry& r);  // eval/ops/sequence/sequence.cpp
void add_loop_ops(OpRegistry& r);      // loop.cpp: Loop, SequenceMap
void add_scan_ops(OpRegistry& r);      // scan.cpp

// Input `i` as a value, or Error(input) "missing input 'what'".
const Value& value_input(const OpContext& ctx, size_t i, const char* what);
// Input `i`, which must be a sequence (Error(input) otherwise).
const Value& sequence_input(const OpContext& ctx, size_t i, const char* what);
// Input `i` when it must be a tensor: nullptr when absent, Error(input)
// when it is a sequence or optional (ops listed by takes_values() see those
// as nullptr in OpContext::inputs, which must not read as absent).
const Tensor* tensor_input(const OpContext& ctx, size_t i, const char* what);
// A scalar integer input (int32 or int64, shape [] — or [1], which
// onnxruntime accepts too), read exactly.
int64_t scalar_int(const Tensor& t, const char* what);

// Joins `parts` along `axis` (already in [0, rank)); with `new_axis`, each
// part first gets a dim of 1 inserted at `axis` (axis in [0, rank]), so the
// parts are stacked. The parts must agree on type and on every other dim
// (Error(input) naming `what` otherwise); at least one part.
Tensor join_tensors(const std::vector<const Tensor*>& parts, int64_t axis, bool new_axis, const std::string& what);

// The `len` slices of `t` from `start` along `axis` (in range, checked by
// the caller). With `drop_axis` (len 1) the axis is removed.
Tensor slice_axis(const Tensor& t, int64_t axis, int64_t start, int64_t len, bool drop_axis);

// Sequences and accumulated loop outputs hold at most max_tensor_bytes()
// in total: Error(input) naming `what` beyond it.
void check_total_bytes(int64_t bytes, const std::string& what);

}  // namespace bnorm::eval
