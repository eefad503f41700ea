// Sequence ops (all since opset 11, SplitToSequence also 24: bfloat16).
//
// SequenceConstruct(inputs...) -> [inputs...], one element type.
// SequenceEmpty<dtype = float> -> [] of dtype.
// SequenceInsert(seq, t, pos = n) -> seq with t before position pos,
//   pos in [-n, n] (negative counts from the back).
// SequenceAt(seq, pos) -> seq[pos], pos in [-n, n-1].
// SequenceErase(seq, pos = -1) -> seq without seq[pos], pos in [-n, n-1].
// SequenceLength(seq) -> n as an int64 scalar.
// SplitToSequence(x, split?)<axis = 0, keepdims = 1>: without split, the
//   slices of size 1 along axis (the axis dropped when keepdims = 0); a
//   scalar split s > 0 cuts chunks of s (the last one may be shorter); a
//   1-D split gives the chunk lengths (>= 0, summing to the axis' size).
// ConcatFromSequence(seq)<axis, new_axis = 0>: concatenation along axis
//   (axis in [-r, r-1]); with new_axis = 1 the tensors are stacked on a
//   new axis (axis in [-r-1, r]). An empty sequence is an error.
// Elements are copied unchanged, so every type bnorm holds is supported.
// A position input may be int32 or int64 of shape [] (or [1], as
// onnxruntime accepts). A sequence may hold at most max_tensor_bytes() in
// total, like one tensor.
#include "core/error.h"
#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/control/control.h"
#include "eval/ops/sequence/ops.h"

namespace bnorm::eval {

namespace {

using Kind = Value::Kind;

// The element type of `seq` (declared or from its first tensor).
DType elem_type(const Value& seq) {
  if (seq.elem != DType::undefined) return seq.elem;
  return seq.items.empty() ? DType::undefined : seq.items[0].dtype;
}

// `pos` made non-negative; it must lie in [-n, n + extra - 1].
int64_t position(const Tensor& pos, int64_t n, int64_t extra) {
  int64_t p = scalar_int(pos, "position");
  const int64_t lo = -n, hi = n + extra - 1;
  if (p < lo || p > hi) {
    fail(ErrorKind::input, "position {} is out of range [{}, {}] for a sequence of {} tensors", p, lo, hi, n);
  }
  return p < 0 ? p + n : p;
}

}  // namespace

Tensors op_sequence_construct(const OpContext& ctx) {
  std::vector<Tensor> items;
  int64_t bytes = 0;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const Tensor& t = ctx.required(i, "inputs");
    if (!items.empty() && t.dtype != items[0].dtype) {
      fail(ErrorKind::input, "input {} has type {}, input 0 {}: a sequence holds one type", i, dtype_name(t.dtype),
           dtype_name(items[0].dtype));
    }
    bytes += static_cast<int64_t>(t.bytes.size());
    check_total_bytes(bytes, "the sequence");
    items.push_back(t);
  }
  if (items.empty()) fail(ErrorKind::input, "SequenceConstruct needs at least one input");
  const DType elem = items[0].dtype;
  ctx.set_output(0, Value::sequence(std::move(items), elem));
  return Tensors(1);
}

Tensors op_sequence_empty(const OpContext& ctx) {
  const auto dtype = static_cast<DType>(attr_int(*ctx.node, "dtype", static_cast<int64_t>(DType::float32)));
  if (dtype_size(dtype) == 0) fail(ErrorKind::unsupported, "a sequence of {} tensors", dtype_name(dtype));
  ctx.set_output(0, Value::sequence({}, dtype));
  return Tensors(1);
}

Tensors op_sequence_insert(const OpContext& ctx) {
  const Value& seq = sequence_input(ctx, 0, "input_sequence");
  const Tensor* given = tensor_input(ctx, 1, "tensor");
  if (!given) fail(ErrorKind::input, "missing input 'tensor'");
  const Tensor& t = *given;
  const DType elem = elem_type(seq);
  if (elem != DType::undefined && t.dtype != elem) {
    fail(ErrorKind::input, "input 'tensor' has type {}, the sequence holds {}", dtype_name(t.dtype), dtype_name(elem));
  }
  const auto n = static_cast<int64_t>(seq.items.size());
  const Tensor* pos = tensor_input(ctx, 2, "position");
  const int64_t at = pos ? position(*pos, n, 1) : n;
  check_total_bytes(seq.byte_size() + static_cast<int64_t>(t.bytes.size()), "the sequence");
  Value out = seq;
  out.elem = t.dtype;
  out.items.insert(out.items.begin() + at, t);
  ctx.set_output(0, std::move(out));
  return Tensors(1);
}

Tensors op_sequence_at(const OpContext& ctx) {
  const Value& seq = sequence_input(ctx, 0, "input_sequence");
  const Tensor* pos = tensor_input(ctx, 1, "position");
  if (!pos) fail(ErrorKind::input, "missing input 'position'");
  const int64_t at = position(*pos, static_cast<int64_t>(seq.items.size()), 0);
  return one_tensor(seq.items[at]);
}

Tensors op_sequence_erase(const OpContext& ctx) {
  const Value& seq = sequence_input(ctx, 0, "input_sequence");
  const auto n = static_cast<int64_t>(seq.items.size());
  if (n == 0) fail(ErrorKind::input, "cannot erase from an empty sequence");
  const Tensor* pos = tensor_input(ctx, 1, "position");
  const int64_t at = pos ? position(*pos, n, 0) : n - 1;
  Value out = seq;
  out.elem = elem_type(seq);
  out.items.erase(out.items.begin() + at);
  ctx.set_output(0, std::move(out));
  return Tensors(1);
}

Tensors op_sequence_length(const OpContext& ctx) {
  const Value& seq = sequence_input(ctx, 0, "input_sequence");
  Tensor out(DType::int64, {});
  out.data<int64_t>()[0] = static_cast<int64_t>(seq.items.size());
  return one_tensor(std::move(out));
}

namespace {

// The chunk lengths SplitToSequence cuts a dim of `size` into.
std::vector<int64_t> split_lengths(const Tensor* split, int64_t size) {
  if (!split) return std::vector<int64_t>(static_cast<size_t>(size), 1);
  if (split->dtype != DType::int32 && split->dtype != DType::int64) {
    fail(ErrorKind::input, "input 'split' must be int32 or int64, is {}", dtype_name(split->dtype));
  }
  if (split->dims.empty()) {
    const int64_t s = scalar_int(*split, "split");
    if (s <= 0) fail(ErrorKind::input, "a scalar 'split' must be positive, is {}", s);
    std::vector<int64_t> out;
    for (int64_t at = 0; at < size; at += s) out.push_back(std::min(s, size - at));
    return out;
  }
  if (split->dims.size() != 1) fail(ErrorKind::input, "input 'split' must be a scalar or 1-D, has shape {}", shape_str(split->dims));
  const std::vector<int64_t> out = read_ints(*split, "split");
  int64_t sum = 0;
  for (int64_t v : out) {
    if (v < 0) fail(ErrorKind::input, "input 'split' holds the negative length {}", v);
    sum += v;
    if (sum > size) break;
  }
  if (sum != size) fail(ErrorKind::input, "input 'split' sums to {}, the axis has {} elements", sum, size);
  return out;
}

}  // namespace

Tensors op_split_to_sequence(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  if (x.dtype == DType::bfloat16 && ctx.version < 24) fail(ErrorKind::input, "bfloat16 input needs SplitToSequence-24");
  const auto rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0) fail(ErrorKind::input, "input 'input' must have rank >= 1, is a scalar");
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), rank);
  const int64_t keepdims = attr_int(*ctx.node, "keepdims", 1);
  if (keepdims != 0 && keepdims != 1) fail(ErrorKind::input, "attribute 'keepdims' must be 0 or 1, is {}", keepdims);
  const Tensor* split = ctx.input(1);
  const bool drop = !split && keepdims == 0;
  std::vector<Tensor> items;
  int64_t at = 0;
  for (int64_t len : split_lengths(split, x.dims[axis])) {
    items.push_back(slice_axis(x, axis, at, len, drop));
    at += len;
  }
  ctx.set_output(0, Value::sequence(std::move(items), x.dtype));
  return Tensors(1);
}

Tensors op_concat_from_sequence(const OpContext& ctx) {
  const Value& seq = sequence_input(ctx, 0, "input_sequence");
  const auto* axis_attr = find_attr(*ctx.node, "axis");
  if (!axis_attr) fail(ErrorKind::input, "missing the required attribute 'axis'");
  const int64_t new_axis = attr_int(*ctx.node, "new_axis", 0);
  if (new_axis != 0 && new_axis != 1) fail(ErrorKind::input, "attribute 'new_axis' must be 0 or 1, is {}", new_axis);
  if (seq.items.empty()) fail(ErrorKind::input, "cannot concatenate an empty sequence");
  const auto rank = static_cast<int64_t>(seq.items[0].dims.size()) + new_axis;
  if (rank == 0) fail(ErrorKind::input, "cannot concatenate scalars without new_axis");
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), rank);
  std::vector<const Tensor*> parts;
  for (const Tensor& t : seq.items) parts.push_back(&t);
  return one_tensor(join_tensors(parts, axis, new_axis == 1, "ConcatFromSequence"));
}

}  // namespace bnorm::eval
