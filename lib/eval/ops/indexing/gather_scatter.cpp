// Gather and scatter by index tensors, for any element type, and the
// registration of the whole indexing family (sorting, selection and
// generator ops live in ops_indexing_*.cpp).
//
// Contract per op (versions in parentheses):
//   GatherElements (11, 13)  out has indices' shape; out[p] = data[p with
//       p[axis] replaced by indices[p]]. indices has data's rank and is no
//       larger than data off the axis.
//   GatherND (11, 12, 13)  with b = batch_dims (12+; 0 at 11) leading dims
//       shared by data and indices and k = indices.dims[-1] in [1, r - b]:
//       out[B, T] = data[B, indices[B, T, 0..k-1], :], of shape
//       indices.dims[:-1] + data.dims[b+k:].
//   Scatter (9), ScatterElements (11, 13, 16, 18)  out = data, then for each
//       p of indices (C order) out[p with indices[p] on axis] =
//       f(that, updates[p]); updates has indices' shape.
//   ScatterND (11, 13, 16, 18)  out = data, then for each index tuple T
//       (C order) out[indices[T], :] = f(that, updates[T, :]); updates has
//       shape indices.dims[:-1] + data.dims[k:].
//   f is the reduction: none (replace; the only one before 16), add and mul
//   (16+), max and min (18+).
// Indices are int32 or int64 (GatherND, ScatterND: int64); negative ones
// count from the end, except at Scatter-9 whose spec gives them no meaning;
// an index out of range is Error(input). bfloat16 data from version 13
// (not in the schemas of 9 and 11).
// Decisions: duplicate indices without a reduction are applied in C order,
// so the last one wins (the spec leaves the order open). Reductions on
// floating types run in double and round once per element at the end (the
// reference rounds after every update: they differ only when an element
// takes several updates); max and min propagate NaN as numpy's maximum and
// minimum do. On integers they run in the type itself, add and mul wrapping
// modulo 2^bits as numpy does; on bool add and max are or, mul and min and.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/indexing/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

// sort.cpp, select.cpp, generators.cpp,
// nms.cpp

namespace {

// `count` elements at offset `at` of data and `from` of the index-shaped
// tensor (indices, updates or the gathered output).
struct Block {
  int64_t at, from, count;
};

enum class Reduction { none, add, mul, max, min };

int64_t wrap_index(int64_t i, int64_t dim, bool negative_ok) {
  if (i < (negative_ok ? -dim : 0) || i >= dim) {
    fail(ErrorKind::input, "index {} is out of range for a dimension of size {}", i, dim);
  }
  return i < 0 ? i + dim : i;
}

void check_bf16(const OpContext& ctx, const Tensor& t, int since) {
  if (t.dtype == DType::bfloat16 && ctx.version < since) {
    fail(ErrorKind::input, "bfloat16 data is allowed from version {}, not at {}", since, ctx.version);
  }
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
  return s;
}

// GatherElements and ScatterElements: one block per element of indices.
std::vector<Block> element_blocks(const std::vector<int64_t>& data_dims, const Tensor& ind, int64_t axis,
                                  bool negative_ok) {
  const size_t r = data_dims.size();
  if (ind.dims.size() != r) fail(ErrorKind::input, "indices have rank {}, data has rank {}", ind.dims.size(), r);
  for (size_t k = 0; k < r; ++k) {
    if (static_cast<int64_t>(k) != axis && ind.dims[k] > data_dims[k]) {
      fail(ErrorKind::input, "indices of shape {} exceed data of shape {} off axis {}", shape_str(ind.dims),
           shape_str(data_dims), axis);
    }
  }
  const std::vector<int64_t> idx = read_ints(ind, "indices");
  const std::vector<int64_t> stride = strides_of(data_dims);
  std::vector<int64_t> pos(r, 0);
  std::vector<Block> blocks;
  blocks.reserve(idx.size());
  for (size_t n = 0; n < idx.size(); ++n) {
    int64_t at = 0;
    for (size_t k = 0; k < r; ++k) {
      at += (static_cast<int64_t>(k) == axis ? wrap_index(idx[n], data_dims[k], negative_ok) : pos[k]) * stride[k];
    }
    blocks.push_back({at, static_cast<int64_t>(n), 1});
    for (size_t k = r; k-- > 0;) {
      if (++pos[k] < ind.dims[k]) break;
      pos[k] = 0;
    }
  }
  return blocks;
}

// GatherND and ScatterND: one block (a slice of data) per index tuple.
std::vector<Block> nd_blocks(const std::vector<int64_t>& data_dims, const Tensor& ind, int64_t b,
                             std::vector<int64_t>& slice_dims) {
  const auto r = static_cast<int64_t>(data_dims.size()), q = static_cast<int64_t>(ind.dims.size());
  if (r < 1 || q < 1) fail(ErrorKind::input, "data (rank {}) and indices (rank {}) need rank 1 or more", r, q);
  if (b < 0 || b >= std::min(q, r)) fail(ErrorKind::input, "batch_dims {} is not below both ranks {} and {}", b, r, q);
  for (int64_t j = 0; j < b; ++j) {
    if (ind.dims[j] != data_dims[j]) {
      fail(ErrorKind::input, "the batch dims of indices {} and data {} differ", shape_str(ind.dims), shape_str(data_dims));
    }
  }
  const int64_t k = ind.dims[q - 1];
  if (k < 1 || k > r - b) fail(ErrorKind::input, "indices.shape[-1] = {} is not in [1, {}]", k, r - b);
  if (ind.dtype != DType::int64) fail(ErrorKind::input, "indices must be int64, not {}", dtype_name(ind.dtype));
  const std::vector<int64_t> idx = read_ints(ind, "indices");
  const std::vector<int64_t> stride = strides_of(data_dims);
  const int64_t per_batch = product(ind.dims, b, q - 1), batch_elems = product(data_dims, b);
  const int64_t slice = product(data_dims, b + k), tuples = product(ind.dims, 0, q - 1);
  std::vector<Block> blocks;
  blocks.reserve(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = (t / per_batch) * batch_elems;
    for (int64_t j = 0; j < k; ++j) at += wrap_index(idx[t * k + j], data_dims[b + j], true) * stride[b + j];
    blocks.push_back({at, t * slice, slice});
  }
  slice_dims.assign(data_dims.begin() + b + k, data_dims.end());
  return blocks;
}

Reduction read_reduction(const OpContext& ctx) {
  const std::string s = attr_string(*ctx.node, "reduction", "none");
  if (s == "none") return Reduction::none;
  if (ctx.version >= 16 && s == "add") return Reduction::add;
  if (ctx.version >= 16 && s == "mul") return Reduction::mul;
  if (ctx.version >= 18 && s == "max") return Reduction::max;
  if (ctx.version >= 18 && s == "min") return Reduction::min;
  fail(ErrorKind::input, "reduction '{}' is not one of version {}'s: {}", s, ctx.version,
       ctx.version >= 18 ? "none, add, mul, max, min" : ctx.version >= 16 ? "none, add, mul" : "none");
}

template <typename T>
T reduce_one(Reduction red, T d, T u) {
  if constexpr (std::is_floating_point_v<T>) {
    if ((red == Reduction::max || red == Reduction::min) && (std::isnan(d) || std::isnan(u))) {
      return std::numeric_limits<T>::quiet_NaN();
    }
  }
  switch (red) {
    case Reduction::add:
      if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(d) + static_cast<uint64_t>(u));
      return d + u;
    case Reduction::mul:
      if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(d) * static_cast<uint64_t>(u));
      return d * u;
    case Reduction::max: return std::max(d, u);
    case Reduction::min: return std::min(d, u);
    default: return u;
  }
}

template <typename T>
void reduce_blocks(T* out, const T* upd, const std::vector<Block>& blocks, Reduction red) {
  for (const Block& b : blocks) {
    for (int64_t i = 0; i < b.count; ++i) out[b.at + i] = reduce_one(red, out[b.at + i], upd[b.from + i]);
  }
}

// out (a copy of data) takes updates at the blocks.
void apply_blocks(Tensor& out, const Tensor& upd, const std::vector<Block>& blocks, Reduction red) {
  const size_t es = dtype_size(out.dtype);
  if (red == Reduction::none) {
    for (const Block& b : blocks) {
      if (b.count) std::memcpy(out.bytes.data() + b.at * es, upd.bytes.data() + b.from * es, b.count * es);
    }
  } else if (is_floating(out.dtype)) {
    std::vector<double> o = load_values<double>(out);
    const std::vector<double> u = load_values<double>(upd);
    reduce_blocks(o.data(), u.data(), blocks, red);
    store_values(out, o.data());
  } else if (out.dtype == DType::boolean) {
    const Reduction as = red == Reduction::add || red == Reduction::max ? Reduction::max : Reduction::min;
    reduce_blocks(out.data<uint8_t>(), upd.data<uint8_t>(), blocks, as);
  } else {
    with_numeric_type(out.dtype, "data", [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) reduce_blocks(out.data<T>(), upd.data<T>(), blocks, red);
    });
  }
}

void check_updates(const Tensor& data, const Tensor& upd, const std::vector<int64_t>& want) {
  if (upd.dtype != data.dtype) {
    fail(ErrorKind::input, "updates are {}, data is {}", dtype_name(upd.dtype), dtype_name(data.dtype));
  }
  if (upd.dims != want) fail(ErrorKind::input, "updates have shape {}, expected {}", shape_str(upd.dims), shape_str(want));
}

}  // namespace

Tensors op_gather_elements(const OpContext& ctx) {
  const Tensor& data = ctx.required(0, "data");
  const Tensor& ind = ctx.required(1, "indices");
  check_bf16(ctx, data, 13);
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), static_cast<int64_t>(data.dims.size()));
  const std::vector<Block> blocks = element_blocks(data.dims, ind, axis, true);
  Tensor out(data.dtype, ind.dims);
  const size_t es = dtype_size(data.dtype);
  for (const Block& b : blocks) std::memcpy(out.bytes.data() + b.from * es, data.bytes.data() + b.at * es, es);
  return one_tensor(std::move(out));
}

Tensors op_gather_nd(const OpContext& ctx) {
  const Tensor& data = ctx.required(0, "data");
  const Tensor& ind = ctx.required(1, "indices");
  check_bf16(ctx, data, 13);
  const int64_t b = attr_int(*ctx.node, "batch_dims", 0);
  if (ctx.version < 12 && b != 0) fail(ErrorKind::input, "batch_dims is an attribute of GatherND from version 12");
  std::vector<int64_t> slice_dims;
  const std::vector<Block> blocks = nd_blocks(data.dims, ind, b, slice_dims);
  std::vector<int64_t> dims(ind.dims.begin(), ind.dims.end() - 1);
  dims.insert(dims.end(), slice_dims.begin(), slice_dims.end());
  Tensor out(data.dtype, dims);
  const size_t es = dtype_size(data.dtype);
  for (const Block& bl : blocks) {
    if (bl.count) std::memcpy(out.bytes.data() + bl.from * es, data.bytes.data() + bl.at * es, bl.count * es);
  }
  return one_tensor(std::move(out));
}

namespace {

// Scatter-9 and ScatterElements.
}  // namespace

Tensors op_scatter_elements(const OpContext& ctx) {
  const Tensor& data = ctx.required(0, "data");
  const Tensor& ind = ctx.required(1, "indices");
  const Tensor& upd = ctx.required(2, "updates");
  const bool legacy = ctx.node->op_type() == "Scatter";
  check_bf16(ctx, data, 13);
  const Reduction red = legacy ? Reduction::none : read_reduction(ctx);
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), static_cast<int64_t>(data.dims.size()));
  check_updates(data, upd, ind.dims);
  const std::vector<Block> blocks = element_blocks(data.dims, ind, axis, !legacy);
  Tensor out = data;
  apply_blocks(out, upd, blocks, red);
  return one_tensor(std::move(out));
}

Tensors op_scatter_nd(const OpContext& ctx) {
  const Tensor& data = ctx.required(0, "data");
  const Tensor& ind = ctx.required(1, "indices");
  const Tensor& upd = ctx.required(2, "updates");
  check_bf16(ctx, data, 13);
  const Reduction red = read_reduction(ctx);
  std::vector<int64_t> want;
  const std::vector<Block> blocks = nd_blocks(data.dims, ind, 0, want);
  want.insert(want.begin(), ind.dims.begin(), ind.dims.end() - 1);
  check_updates(data, upd, want);
  Tensor out = data;
  apply_blocks(out, upd, blocks, red);
  return one_tensor(std::move(out));
}

}  // namespace bnorm::eval
