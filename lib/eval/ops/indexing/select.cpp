// Ops that keep, move or blank elements by position, for any element type:
// Compress, NonZero, ReverseSequence, Trilu.
//
// Contract per op (versions in parentheses):
//   Compress (9, 11)  the slices along `axis` (or, without it, the elements
//       of the flattened input) whose bool `condition` entry is true;
//       condition (rank 1) may be shorter than the axis: the rest is dropped.
//   NonZero (9, 13)  int64 [rank, count]: the coordinates of the non-zero
//       elements in C order; a scalar gives [0, count]. bfloat16 from 13.
//   ReverseSequence (10)  for batch b (batch_axis, 0 or 1) the first
//       sequence_lens[b] steps along time_axis (the other of 0 and 1) in
//       reverse order, the rest as they are; 0 <= sequence_lens[b] <= steps.
//   Trilu (14)  keeps (i, j) of the last two dims where j - i >= k (upper,
//       the default) or j - i <= k (upper = 0), zeros elsewhere; k from the
//       optional int64 input, default 0.
// Decisions: Compress-9's spec gives no meaning to a negative axis; it is
// read as counting from the back, as 11 defines. A condition longer than the
// axis is accepted when its extra entries are false (numpy's compress
// accepts that too), a true one past the end is Error(input). NonZero counts
// NaN as non-zero and -0.0 as zero (numpy).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/indexing/ops.h"

namespace bnorm::eval {

namespace {

std::vector<int64_t> iota_map(int64_t n) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  std::iota(m.begin(), m.end(), int64_t{0});
  return m;
}

}  // namespace

Tensors op_compress(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const Tensor& cond = ctx.required(1, "condition");
  if (cond.dtype != DType::boolean || cond.dims.size() != 1) {
    fail(ErrorKind::input, "condition must be a rank-1 bool tensor, not {} {}", dtype_name(cond.dtype),
         shape_str(cond.dims));
  }
  if (x.dims.empty()) fail(ErrorKind::input, "input must have rank 1 or more");
  const bool by_axis = find_attr(*ctx.node, "axis") != nullptr;
  const std::vector<int64_t> dims = by_axis ? x.dims : std::vector<int64_t>{x.numel()};
  const int64_t axis = by_axis ? normalize_axis(attr_int(*ctx.node, "axis", 0), static_cast<int64_t>(dims.size())) : 0;
  std::vector<int64_t> picks;
  const uint8_t* c = cond.data<uint8_t>();
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!c[i]) continue;
    if (i >= dims[axis]) fail(ErrorKind::input, "condition is true at {}, past axis {} of size {}", i, axis, dims[axis]);
    picks.push_back(i);
  }
  const int64_t outer = product(dims, 0, axis), inner = product(dims, axis + 1);
  Tensor view = x;
  view.dims = {outer, dims[axis], inner};
  Tensor out = remap(view, {iota_map(outer), picks, iota_map(inner)});
  out.dims = dims;
  out.dims[axis] = static_cast<int64_t>(picks.size());
  return one_tensor(std::move(out));
}

Tensors op_non_zero(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dtype == DType::bfloat16 && ctx.version < 13) fail(ErrorKind::input, "NonZero-9 does not take bfloat16 input");
  std::vector<bool> nz(static_cast<size_t>(x.numel()));
  if (is_floating(x.dtype)) {
    const std::vector<double> v = load_values<double>(x);
    for (size_t i = 0; i < v.size(); ++i) nz[i] = v[i] != 0;  // NaN != 0
  } else {
    const size_t es = dtype_size(x.dtype);
    if (es == 0) fail(ErrorKind::unsupported, "input of type {}", dtype_name(x.dtype));
    for (size_t i = 0; i < nz.size(); ++i) {
      const uint8_t* p = x.bytes.data() + i * es;
      nz[i] = std::any_of(p, p + es, [](uint8_t b) { return b != 0; });
    }
  }
  const auto count = static_cast<int64_t>(std::count(nz.begin(), nz.end(), true));
  const size_t rank = x.dims.size();
  Tensor out(DType::int64, {static_cast<int64_t>(rank), count});
  int64_t* o = out.data<int64_t>();
  std::vector<int64_t> pos(rank, 0);
  for (size_t i = 0, j = 0; i < nz.size(); ++i) {
    if (nz[i]) {
      for (size_t k = 0; k < rank; ++k) o[k * count + j] = pos[k];
      ++j;
    }
    for (size_t k = rank; k-- > 0;) {
      if (++pos[k] < x.dims[k]) break;
      pos[k] = 0;
    }
  }
  return one_tensor(std::move(out));
}

Tensors op_reverse_sequence(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  const Tensor& lens_t = ctx.required(1, "sequence_lens");
  if (x.dims.size() < 2) fail(ErrorKind::input, "input must have rank 2 or more, not {}", x.dims.size());
  const int64_t batch_axis = attr_int(*ctx.node, "batch_axis", 1), time_axis = attr_int(*ctx.node, "time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    fail(ErrorKind::input, "batch_axis {} and time_axis {} must be 0 and 1 in some order", batch_axis, time_axis);
  }
  if (lens_t.dtype != DType::int64) fail(ErrorKind::input, "sequence_lens must be int64");
  const int64_t batch = x.dims[batch_axis], steps = x.dims[time_axis];
  const std::vector<int64_t> lens = read_ints(lens_t, "sequence_lens");
  if (lens_t.dims.size() != 1 || static_cast<int64_t>(lens.size()) != batch) {
    fail(ErrorKind::input, "sequence_lens has shape {}, expected [{}]", shape_str(lens_t.dims), batch);
  }
  const int64_t inner = product(x.dims, 2);
  const size_t block = static_cast<size_t>(inner) * dtype_size(x.dtype);
  auto offset = [&](int64_t b, int64_t t) { return batch_axis == 0 ? b * steps + t : t * batch + b; };
  Tensor out(x.dtype, x.dims);
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > steps) fail(ErrorKind::input, "sequence_lens[{}] = {} is not in [0, {}]", b, lens[b], steps);
    for (int64_t t = 0; t < steps && block; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      std::memcpy(out.bytes.data() + offset(b, t) * block, x.bytes.data() + offset(b, from) * block, block);
    }
  }
  return one_tensor(std::move(out));
}

Tensors op_trilu(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  if (x.dims.size() < 2) fail(ErrorKind::input, "input must have rank 2 or more, not {}", x.dims.size());
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    if (kt->dtype != DType::int64 || kt->numel() != 1) fail(ErrorKind::input, "input 'k' must hold one int64");
    k = kt->data<int64_t>()[0];
  }
  const bool upper = attr_int(*ctx.node, "upper", 1) != 0;
  const size_t r = x.dims.size();
  const int64_t rows = x.dims[r - 2], cols = x.dims[r - 1], mats = product(x.dims, 0, r - 2);
  const size_t es = dtype_size(x.dtype);
  Tensor out(x.dtype, x.dims);
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        // j - i is within (-rows, cols): compared with k it cannot overflow.
        if (upper ? j - i < k : j - i > k) continue;
        const int64_t at = (m * rows + i) * cols + j;
        std::memcpy(out.bytes.data() + at * es, x.bytes.data() + at * es, es);
      }
    }
  }
  return one_tensor(std::move(out));
}

}  // namespace bnorm::eval
