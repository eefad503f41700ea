// TensorScatter (24): writes `update` into a copy of `past_cache` along the
// sequence axis, at a position per batch entry (a KV cache update).
//
// Contract: past_cache [b, D1, ..., max_seq (at axis), ..., Dn] and update
// of the same rank and type with the same dims but at `axis` (default -2;
// 0, the batch axis, is Error(input)), where its length seq is at most
// max_seq. write_indices (optional, int64, [b]; absent: zeros) gives each
// batch entry's first write position w: update's slice s along the axis
// goes to position w + s (mode "linear", default; w + seq > max_seq or
// w < 0 is Error(input)) or (w + s) mod max_seq (mode "circular", the
// modulo numpy's, never negative). Every other value is past_cache's.
// Any type bnorm holds; elements are copied as they are.
// Decision: in circular mode only the sequence position wraps. The text's
// pseudocode takes np.mod of the whole index tuple, which would also wrap a
// batch or head index of max_seq or more into another entry; its prose says
// "the write index is modulo max_sequence_length", and that is what runs.
#include <cstring>

#include "eval/ops/indexing/ops.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/run/op.h"
#include "model/attrs.h"

namespace bnorm::eval {

Tensors op_tensor_scatter(const OpContext& ctx) {
  const Tensor& past = ctx.required(0, "past_cache");
  const Tensor& update = ctx.required(1, "update");
  const Tensor* indices = ctx.input(2);
  const auto rank = static_cast<int64_t>(past.dims.size());
  if (update.dtype != past.dtype) {
    fail(ErrorKind::input, "update is {} and past_cache {}: they must have one type", dtype_name(update.dtype),
         dtype_name(past.dtype));
  }
  if (rank < 2) fail(ErrorKind::input, "past_cache must have rank 2 or more, has shape {}", shape_str(past.dims));
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", -2), rank);
  if (axis == 0) fail(ErrorKind::input, "axis is the batch axis 0");
  const std::string mode = attr_string(*ctx.node, "mode", "linear");
  if (mode != "linear" && mode != "circular") fail(ErrorKind::input, "mode '{}' is not linear or circular", mode);
  const bool circular = mode == "circular";
  bool fits = update.dims.size() == past.dims.size();
  for (int64_t d = 0; fits && d < rank; ++d) {
    fits = d == axis ? update.dims[d] <= past.dims[d] : update.dims[d] == past.dims[d];
  }
  if (!fits) {
    fail(ErrorKind::input, "update of shape {} does not fit past_cache of shape {} (axis {})", shape_str(update.dims),
         shape_str(past.dims), axis);
  }
  const int64_t batch = past.dims[0], max_seq = past.dims[axis], seq = update.dims[axis];
  std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
  if (indices) {
    if (indices->dtype != DType::int64 || indices->dims != std::vector<int64_t>{batch}) {
      fail(ErrorKind::input, "write_indices must be int64 of shape [{}], is {} {}", batch, dtype_name(indices->dtype),
           shape_str(indices->dims));
    }
    const auto* w = indices->data<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      if (!circular && (w[b] < 0 || w[b] > max_seq - seq)) {
        fail(ErrorKind::input, "write index {} of batch entry {} with {} updates leaves the cache of {} (linear mode)",
             w[b], b, seq, max_seq);
      }
      starts[b] = w[b];
    }
  }
  const int64_t prefix = product(past.dims, 0, axis), per_batch = product(past.dims, 1, axis);
  const auto row = static_cast<size_t>(product(past.dims, axis + 1)) * dtype_size(past.dtype);
  Tensor out = ctx.input_or_copy(0);  // past (moved out when donated) is not read past this line
  if (seq == 0 || max_seq == 0) return one_tensor(std::move(out));
  for (int64_t p = 0; p < prefix; ++p) {
    int64_t w = starts[static_cast<size_t>(p / per_batch)];
    if (circular) w = ((w % max_seq) + max_seq) % max_seq;  // no overflow adding s below
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t pos = circular ? (w + s) % max_seq : w + s;
      std::memcpy(out.bytes.data() + static_cast<size_t>(p * max_seq + pos) * row,
                  update.bytes.data() + static_cast<size_t>(p * seq + s) * row, row);
    }
  }
  return one_tensor(std::move(out));
}

}  // namespace bnorm::eval
