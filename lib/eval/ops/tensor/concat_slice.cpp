// Ops that pick or repeat elements by index, for any element type: Concat,
// Split, Gather, Slice, Tile, Expand, Size.
//
// Contract per op (versions in parentheses where they differ):
//   Concat  inputs of one type and rank, equal but along `axis` (default 1
//           before 4, required from 4; negative from 11).
//   Split   along `axis` (default 0) into the sizes of `split` (attribute
//           before 13, else input 1; before 2 either), else into equal parts
//           (18+: of ceil(dim / num_outputs), the last one smaller).
//   Gather  out = data.dims[:axis] + indices.dims + data.dims[axis+1:];
//           indices int32 or int64, negative ones count from the end (11+,
//           accepted before too); out of range is Error(input).
//   Slice   starts, ends and optional axes as attributes (1..9), as inputs
//           with optional axes and steps (10+). Negative starts and ends
//           count from the end, then clamp: [0, dim] for a positive step,
//           [0, dim-1] (start) and [-1, dim-1] (end) for a negative one.
//   Tile    repeats per axis from input 1 (6+); before 6 inputs `tiles` and
//           `axis`, scalars, repeat along one axis.
//   Expand  numpy broadcasting of input and shape (both ways).
//   Size    the element count, an int64 scalar.
#include <algorithm>
#include <cstring>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/tensor/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

Tensor reshaped(const Tensor& x, std::vector<int64_t> dims) {
  Tensor out = x;
  out.dims = std::move(dims);
  return out;
}

std::vector<int64_t> identity_map(int64_t n) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) m[i] = i;
  return m;
}

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

SliceArgs slice_args(const OpContext& ctx, int64_t rank) {
  SliceArgs a;
  if (ctx.version < 10) {
    a.starts = attr_ints(*ctx.node, "starts").value_or(std::vector<int64_t>{});
    a.ends = attr_ints(*ctx.node, "ends").value_or(std::vector<int64_t>{});
    a.axes = attr_ints(*ctx.node, "axes").value_or(std::vector<int64_t>{});
  } else {
    a.starts = read_ints(ctx.required(1, "starts"), "starts");
    a.ends = read_ints(ctx.required(2, "ends"), "ends");
    if (const Tensor* t = ctx.input(3)) a.axes = read_ints(*t, "axes");
    if (const Tensor* t = ctx.input(4)) a.steps = read_ints(*t, "steps");
  }
  if (a.axes.empty()) a.axes = identity_map(static_cast<int64_t>(a.starts.size()));
  if (a.steps.empty()) a.steps.assign(a.starts.size(), 1);
  if (a.ends.size() != a.starts.size() || a.axes.size() != a.starts.size() || a.steps.size() != a.starts.size()) {
    fail(ErrorKind::input, "starts, ends, axes and steps have {}, {}, {} and {} values, which must be equal",
         a.starts.size(), a.ends.size(), a.axes.size(), a.steps.size());
  }
  for (int64_t& axis : a.axes) axis = normalize_axis(axis, rank);
  return a;
}

// The indices start, start + step, ... before end, after ONNX's clamping.
std::vector<int64_t> slice_map(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (step == 0) fail(ErrorKind::input, "a step of 0");
  if (dim == 0) return {};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  std::vector<int64_t> m;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) m.push_back(i);
  return m;
}

}  // namespace

Tensors op_concat(const OpContext& ctx) {
  if (ctx.input_count() == 0) fail(ErrorKind::input, "at least one input is needed");
  const Tensor& first = ctx.required(0, "inputs");
  const auto rank = static_cast<int64_t>(first.dims.size());
  if (ctx.version >= 4 && !find_attr(*ctx.node, "axis")) fail(ErrorKind::input, "attribute 'axis' is missing");
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 1), rank);
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const Tensor& t = ctx.required(i, "inputs");
    bool fits = t.dtype == first.dtype && t.dims.size() == first.dims.size();
    for (int64_t k = 0; fits && k < rank; ++k) fits = k == axis || t.dims[k] == first.dims[k];
    if (!fits) {
      fail(ErrorKind::input, "input {} ({} {}) does not fit input 0 ({} {}) along axis {}", i, dtype_name(t.dtype),
           shape_str(t.dims), dtype_name(first.dtype), shape_str(first.dims), axis);
    }
    dims[axis] += t.dims[axis];
  }
  Tensors out(1);
  out[0] = Tensor(first.dtype, dims);
  const size_t es = dtype_size(first.dtype);
  const int64_t outer = product(dims, 0, axis);
  uint8_t* dst = out[0].bytes.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      const Tensor& t = *ctx.input(i);
      const size_t block = static_cast<size_t>(product(t.dims, axis)) * es;
      if (block) std::memcpy(dst, t.bytes.data() + o * block, block);
      dst += block;
    }
  }
  return out;
}

Tensors op_gather(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const Tensor& ind = ctx.required(1, "indices");
  const auto rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0) fail(ErrorKind::input, "input 'data' must have rank 1 or more");
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), rank);
  const int64_t dim = x.dims[axis];
  std::vector<int64_t> picks = read_ints(ind, "indices");
  for (int64_t& i : picks) {
    if (i < -dim || i >= dim) fail(ErrorKind::input, "index {} is out of range for axis {} of size {}", i, axis, dim);
    if (i < 0) i += dim;
  }
  const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis + 1);
  const Tensor flat = reshaped(x, {outer, dim, inner});
  Tensor r = remap(flat, {identity_map(outer), picks, identity_map(inner)});
  std::vector<int64_t> dims(x.dims.begin(), x.dims.begin() + axis);
  dims.insert(dims.end(), ind.dims.begin(), ind.dims.end());
  dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  r.dims = std::move(dims);
  return one_tensor(std::move(r));
}

Tensors op_slice(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const auto rank = static_cast<int64_t>(x.dims.size());
  const SliceArgs a = slice_args(ctx, rank);
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < a.axes.size(); ++i) {
    const int64_t k = a.axes[i];
    if (seen[k]) fail(ErrorKind::input, "axis {} is sliced twice", k);
    seen[k] = true;
    maps[k] = slice_map(a.starts[i], a.ends[i], a.steps[i], x.dims[k]);
  }
  for (int64_t k = 0; k < rank; ++k) {
    if (!seen[k]) maps[k] = identity_map(x.dims[k]);
  }
  return one_tensor(remap(x, maps));
}

Tensors op_tile(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> repeats(static_cast<size_t>(rank), 1);
  if (ctx.version < 6) {
    const std::vector<int64_t> tiles = read_ints(ctx.required(1, "tiles"), "tiles");
    const std::vector<int64_t> axis = read_ints(ctx.required(2, "axis"), "axis");
    if (tiles.size() != 1 || axis.size() != 1) fail(ErrorKind::input, "inputs 'tiles' and 'axis' must be scalars");
    repeats[normalize_axis(axis[0], rank)] = tiles[0];
  } else {
    repeats = read_ints(ctx.required(1, "repeats"), "repeats");
    if (static_cast<int64_t>(repeats.size()) != rank) {
      fail(ErrorKind::input, "{} repeats for an input of rank {}", repeats.size(), rank);
    }
  }
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    if (repeats[k] < 0) fail(ErrorKind::input, "a negative repeat {}", repeats[k]);
    for (int64_t i = 0; i < x.dims[k] * repeats[k]; ++i) maps[k].push_back(i % x.dims[k]);
  }
  return one_tensor(remap(x, maps));
}

Tensors op_expand(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const std::vector<int64_t> dims = broadcast_shapes(x.dims, read_ints(ctx.required(1, "shape"), "shape"));
  std::vector<int64_t> aligned(dims.size() - x.dims.size(), 1);
  aligned.insert(aligned.end(), x.dims.begin(), x.dims.end());
  std::vector<std::vector<int64_t>> maps(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    maps[k] = aligned[k] == 1 ? std::vector<int64_t>(static_cast<size_t>(dims[k]), 0) : identity_map(dims[k]);
  }
  return one_tensor(remap(reshaped(x, aligned), maps));
}

Tensors op_split(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const auto rank = static_cast<int64_t>(x.dims.size());
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), rank);
  const int64_t dim = x.dims[axis];
  const int64_t parts = ctx.output_count();
  std::vector<int64_t> sizes;
  if (ctx.version < 13) sizes = attr_ints(*ctx.node, "split").value_or(std::vector<int64_t>{});
  if (sizes.empty() && (ctx.version < 2 || ctx.version >= 13) && ctx.input(1)) sizes = read_ints(*ctx.input(1), "split");
  if (sizes.empty()) {
    const int64_t each = ctx.version >= 18 ? (dim + parts - 1) / parts : dim / parts;
    if (ctx.version < 18 && each * parts != dim) {
      fail(ErrorKind::input, "axis {} of size {} does not split into {} equal parts", axis, dim, parts);
    }
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= each) sizes.push_back(std::min(each, left));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (static_cast<int64_t>(sizes.size()) != parts || total != dim) {
    fail(ErrorKind::input, "split {} does not divide axis {} of size {} into {} outputs", shape_str(sizes), axis, dim,
         parts);
  }
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) maps[k] = identity_map(x.dims[k]);
  Tensors out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    maps[axis] = slice_map(start, start + s, 1, dim);
    out.push_back(remap(x, maps));
    start += s;
  }
  return out;
}

Tensors op_size(const OpContext& ctx) {
  Tensors out(1);
  out[0] = Tensor(DType::int64, {});
  out[0].data<int64_t>()[0] = ctx.required(0, "data").numel();
  return out;
}

}  // namespace bnorm::eval
