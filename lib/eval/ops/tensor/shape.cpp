// Ops that move or name data without arithmetic: Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Identity, Constant, Shape, ConstantOfShape
// (Dropout is in nn/dropout, If in control).
//
// Contract per op (versions in parentheses where they differ):
//   Reshape    shape from the `shape` attribute (1..4) or input (5+); 0 copies
//              the input dim (unless allowzero = 1, 14+), -1 is inferred.
//   Flatten    [prod(dims[:axis]), prod(dims[axis:])], axis may be negative (11+).
//   Squeeze    axes from the attribute (< 13) or input (13+); none: every 1.
//   Unsqueeze  axes from the attribute (< 13) or input (13+), against the output rank.
//   Shape      the dims as int64; from 15 dims[start:end], negative start and
//              end counting from the end, both clamped to [0, rank].
//   ConstantOfShape  dims from the int64 input, every element the one-value
//              tensor attribute `value` (default float 0).
#include <algorithm>
#include <cstring>

#include "model/attrs.h"
#include "model/buffer_pool.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/tensor/ops.h"
#include "model/tensor_proto.h"

namespace bnorm::eval {

namespace {

// Input 0 (x) with new dims: its storage itself when x dies at this node,
// else a copy.
Tensor with_dims(const OpContext& ctx, const Tensor& x, std::vector<int64_t> dims) {
  if (product(dims) != x.numel()) {
    fail(ErrorKind::input, "cannot reshape {} elements of shape {} to {}", x.numel(), shape_str(x.dims), shape_str(dims));
  }
  Tensor out = ctx.input_or_copy(0);
  out.dims = std::move(dims);
  return out;
}

// Axes from the attribute (before `input_from`) or from input 1.
std::optional<std::vector<int64_t>> axes_of(const OpContext& ctx, int input_from) {
  if (ctx.version < input_from) return attr_ints(*ctx.node, "axes");
  if (const Tensor* t = ctx.input(1)) return read_ints(*t, "axes");
  return std::nullopt;
}

}  // namespace

Tensors op_reshape(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  std::vector<int64_t> shape;
  if (ctx.version < 5) {
    shape = attr_ints(*ctx.node, "shape").value_or(std::vector<int64_t>{});
  } else {
    shape = read_ints(ctx.required(1, "shape"), "shape");
  }
  const bool allowzero = ctx.version >= 14 && attr_int(*ctx.node, "allowzero", 0) == 1;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= x.dims.size()) fail(ErrorKind::input, "shape {} copies dim {} of a rank {} input", shape_str(shape), i, x.dims.size());
      shape[i] = x.dims[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) fail(ErrorKind::input, "shape {} has more than one -1", shape_str(shape));
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      fail(ErrorKind::input, "shape {} has a negative dim", shape_str(shape));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      fail(ErrorKind::input, "cannot infer the -1 in {} for {} elements", shape_str(shape), x.numel());
    }
    shape[infer] = x.numel() / known;
  }
  Tensors out;
  out.push_back(with_dims(ctx, x, shape));
  return out;
}

Tensors op_flatten(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const auto rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = attr_int(*ctx.node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) fail(ErrorKind::input, "axis {} is out of range for rank {}", axis, rank);
  Tensors out;
  out.push_back(with_dims(ctx, x, {product(x.dims, 0, axis), product(x.dims, axis)}));
  return out;
}

Tensors op_squeeze(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<bool> drop(x.dims.size(), false);
  if (auto axes = axes_of(ctx, 13)) {
    for (int64_t a : *axes) {
      const int64_t k = normalize_axis(a, rank);
      if (x.dims[k] != 1) fail(ErrorKind::input, "cannot squeeze axis {} of shape {}", a, shape_str(x.dims));
      drop[k] = true;
    }
  } else {
    for (size_t k = 0; k < x.dims.size(); ++k) drop[k] = x.dims[k] == 1;
  }
  std::vector<int64_t> dims;
  for (size_t k = 0; k < x.dims.size(); ++k) {
    if (!drop[k]) dims.push_back(x.dims[k]);
  }
  Tensors out;
  out.push_back(with_dims(ctx, x, dims));
  return out;
}

Tensors op_unsqueeze(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const auto axes = axes_of(ctx, 13);
  if (!axes) fail(ErrorKind::input, "axes are missing");
  const auto rank = static_cast<int64_t>(x.dims.size() + axes->size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    const int64_t k = normalize_axis(a, rank);
    if (added[k]) fail(ErrorKind::input, "axis {} is given twice", a);
    added[k] = true;
  }
  std::vector<int64_t> dims;
  size_t from = 0;
  for (int64_t k = 0; k < rank; ++k) dims.push_back(added[k] ? 1 : x.dims[from++]);
  Tensors out;
  out.push_back(with_dims(ctx, x, dims));
  return out;
}

namespace {

// y = x with its axes permuted (perm[k]: the input axis of output axis k),
// elements copied as integers U of their size. Input axes that stay next
// to each other in order are merged first; a permutation that is then a
// swap of the two last axes (NCHW -> NHWC, a matrix transpose) runs in
// square blocks, others element by element in output order.
template <class U>
void transpose_elements(const Tensor& x, const std::vector<int64_t>& perm, Tensor& y) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const U* src = reinterpret_cast<const U*>(x.bytes.data());
  U* dst = reinterpret_cast<U*>(y.bytes.data());
  // Merged axes: runs of perm whose input axes are consecutive.
  std::vector<int64_t> groups;  // input size of each merged output axis
  std::vector<int64_t> first;   // the first input axis of each
  for (size_t k = 0; k < perm.size(); ++k) {
    if (k > 0 && perm[k] == perm[k - 1] + 1) {
      groups.back() *= x.dims[perm[k]];
    } else {
      groups.push_back(x.dims[perm[k]]);
      first.push_back(perm[k]);
    }
  }
  const size_t r = groups.size();
  // The merged axes' order in the input.
  std::vector<size_t> order(r);
  for (size_t k = 0; k < r; ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  std::vector<int64_t> in_stride(r);
  int64_t st = 1;
  for (size_t k = r; k-- > 0;) {
    in_stride[order[k]] = st;
    st *= groups[order[k]];
  }
  if (r == 1) {
    std::copy(src, src + total, dst);
    return;
  }
  // (Outer axes in order would have merged into one: r is 2 or 3.)
  const bool swap_last = r <= 3 && in_stride[r - 2] == 1 && in_stride[r - 1] == groups[r - 2];
  if (swap_last) {
    // Each outer index: [rows, cols] of the input -> [cols, rows].
    const int64_t rows = groups[r - 1], cols = groups[r - 2], outer = total / (rows * cols);
    constexpr int64_t kBlock = 32;
    for (int64_t o = 0; o < outer; ++o) {
      const U* a = src + o * rows * cols;
      U* b = dst + o * rows * cols;
      for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
        for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
          const int64_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
          for (int64_t i = r0; i < r1; ++i)
            for (int64_t j = c0; j < c1; ++j) b[j * rows + i] = a[i * cols + j];
        }
    }
    return;
  }
  std::vector<int64_t> idx(r, 0);
  int64_t from = 0;
  for (int64_t o = 0; o < total; ++o) {
    dst[o] = src[from];
    for (size_t d = r; d-- > 0;) {
      from += in_stride[d];
      if (++idx[d] < groups[d]) break;
      from -= in_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

Tensors op_transpose(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const size_t rank = x.dims.size();
  std::vector<int64_t> perm = attr_ints(*ctx.node, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty()) {
    for (size_t k = 0; k < rank; ++k) perm.push_back(static_cast<int64_t>(rank - 1 - k));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (sorted.size() != rank || sorted[k] != static_cast<int64_t>(k)) {
      fail(ErrorKind::input, "perm {} is not a permutation of rank {}", shape_str(perm), rank);
    }
  }
  std::vector<int64_t> dims(rank);
  for (size_t k = 0; k < rank; ++k) dims[k] = x.dims[perm[k]];
  Tensors out(1);
  out[0] = tensor_for_overwrite(x.dtype, dims);  // every element is written below
  const size_t es = dtype_size(x.dtype);
  if (es == 4) {
    transpose_elements<uint32_t>(x, perm, out[0]);
  } else if (es == 2) {
    transpose_elements<uint16_t>(x, perm, out[0]);
  } else if (es == 8) {
    transpose_elements<uint64_t>(x, perm, out[0]);
  } else if (es == 1) {
    transpose_elements<uint8_t>(x, perm, out[0]);
  } else {  // every element type bnorm holds has one of the sizes above
    fail(ErrorKind::unsupported, "Transpose of {}", dtype_name(x.dtype));
  }
  return out;
}

Tensors op_identity(const OpContext& ctx) {
  ctx.required(0, "input");
  return one_tensor(ctx.input_or_copy(0));
}

Tensors op_constant(const OpContext& ctx) {
  const auto& n = *ctx.node;
  Tensors out(1);
  if (const auto* a = find_attr(n, "value")) {
    out[0] = decode_tensor(a->t(), ctx.model_dir);
  } else if (find_attr(n, "value_float")) {
    out[0] = Tensor::from_f64(DType::float32, {}, {attr_float(n, "value_float", 0)});
  } else if (auto fs = attr_floats(n, "value_floats")) {
    out[0] = Tensor::from_f64(DType::float32, {static_cast<int64_t>(fs->size())}, {fs->begin(), fs->end()});
  } else if (find_attr(n, "value_int")) {
    out[0] = Tensor(DType::int64, {});
    out[0].data<int64_t>()[0] = attr_int(n, "value_int", 0);
  } else if (auto is = attr_ints(n, "value_ints")) {
    out[0] = Tensor(DType::int64, {static_cast<int64_t>(is->size())});
    if (!is->empty()) std::memcpy(out[0].bytes.data(), is->data(), is->size() * sizeof(int64_t));
  } else {
    fail(ErrorKind::unsupported, "a Constant without a value, value_float(s) or value_int(s) attribute");
  }
  return out;
}

Tensors op_shape(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const auto rank = static_cast<int64_t>(x.dims.size());
  int64_t start = 0, end = rank;
  if (ctx.version >= 15) {
    start = attr_int(*ctx.node, "start", 0);
    end = attr_int(*ctx.node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
  }
  const int64_t n = std::max<int64_t>(end - start, 0);
  Tensors out(1);
  out[0] = Tensor(DType::int64, {n});
  for (int64_t i = 0; i < n; ++i) out[0].data<int64_t>()[i] = x.dims[start + i];
  return out;
}

Tensors op_constant_of_shape(const OpContext& ctx) {
  const std::vector<int64_t> dims = read_ints(ctx.required(0, "input"), "input");
  Tensor value = Tensor(DType::float32, {1});
  if (const auto* a = find_attr(*ctx.node, "value")) value = decode_tensor(a->t(), ctx.model_dir);
  if (value.numel() != 1) fail(ErrorKind::input, "attribute 'value' must hold one element, has {}", value.numel());
  Tensors out(1);
  out[0] = Tensor(value.dtype, dims);
  const size_t es = dtype_size(value.dtype);
  for (int64_t i = 0; i < out[0].numel(); ++i) std::memcpy(out[0].bytes.data() + i * es, value.bytes.data(), es);
  return out;
}

}  // namespace bnorm::eval
