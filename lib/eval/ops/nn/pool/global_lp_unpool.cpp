// MaxUnpool (9, 11, 22): the partial inverse of MaxPool.
//
// The unpooled shape is [N, C, (in - 1) * stride - pad_begin - pad_end +
// kernel per spatial axis]; U is zero there except U.flat[I[i]] = X[i]
// (I: MaxPool's Indices, flat indices into U). Y is U, or with the
// optional input output_shape (the full shape) U zero-padded at the end of
// each axis up to it, as ONNX's reference and its conformance data do.
// Versions 9, 11 and 22 differ only in wording and types. Decisions: an
// index outside U, or an output_shape smaller than U, is Error(input);
// when two indices repeat, the later element of X wins.
// Elements are copied bit for bit, so every type bnorm holds works.
#include <cstring>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/nn/pool/ops.h"

namespace bnorm::eval {

namespace {

std::vector<int64_t> unpooled_dims(const OpContext& ctx, const Tensor& x) {
  const size_t nd = x.dims.size() - 2;
  const auto& node = *ctx.node;
  const auto kernel = attr_ints(node, "kernel_shape");
  if (!kernel || kernel->size() != nd) fail(ErrorKind::input, "kernel_shape must have {} values", nd);
  const auto stride = attr_ints(node, "strides").value_or(std::vector<int64_t>(nd, 1));
  const auto pads = attr_ints(node, "pads").value_or(std::vector<int64_t>(2 * nd, 0));
  if (stride.size() != nd || pads.size() != 2 * nd) fail(ErrorKind::input, "strides or pads do not match {} spatial dims", nd);
  std::vector<int64_t> dims{x.dims[0], x.dims[1]};
  for (size_t d = 0; d < nd; ++d) {
    const int64_t limit = int64_t{1} << 40;
    if ((*kernel)[d] <= 0 || stride[d] <= 0 || (*kernel)[d] > limit || stride[d] > limit || std::abs(pads[d]) > limit ||
        std::abs(pads[nd + d]) > limit) {
      fail(ErrorKind::input, "invalid kernel_shape, strides or pads on axis {}", d);
    }
    const int64_t len = (x.dims[2 + d] - 1) * stride[d] - pads[d] - pads[nd + d] + (*kernel)[d];
    if (len < 0) fail(ErrorKind::input, "unpooled axis {} would have length {}", d, len);
    dims.push_back(len);
  }
  return dims;
}

}  // namespace

Tensors op_max_unpool(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& idx = ctx.required(1, "I");
  if (x.dims.size() < 3) fail(ErrorKind::input, "input 'X' must have rank 3 or more, has shape {}", shape_str(x.dims));
  if (idx.dims != x.dims) fail(ErrorKind::input, "I {} must have X's shape {}", shape_str(idx.dims), shape_str(x.dims));
  if (idx.dtype != DType::int64) fail(ErrorKind::input, "input 'I' must be int64, not {}", dtype_name(idx.dtype));
  const std::vector<int64_t> dims = unpooled_dims(ctx, x);
  Tensor u(x.dtype, dims);
  const int64_t total = u.numel(), n = x.numel();
  const size_t es = dtype_size(x.dtype);
  const int64_t* at = idx.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (at[i] < 0 || at[i] >= total) fail(ErrorKind::input, "index {} is outside the output {}", at[i], shape_str(dims));
    std::memcpy(u.bytes.data() + at[i] * es, x.bytes.data() + i * es, es);
  }
  const Tensor* shape = ctx.input(2);
  if (!shape) return {std::move(u)};
  const std::vector<int64_t> want = read_ints(*shape, "output_shape");
  if (want.size() != dims.size()) fail(ErrorKind::input, "output_shape {} must have rank {}", shape_str(want), dims.size());
  std::vector<std::vector<int64_t>> maps(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    if (want[k] < dims[k]) fail(ErrorKind::input, "output_shape {} is smaller than {}", shape_str(want), shape_str(dims));
    for (int64_t i = 0; i < want[k]; ++i) maps[k].push_back(i < dims[k] ? i : -1);
  }
  return one_tensor(remap(u, maps));
}

}  // namespace bnorm::eval
