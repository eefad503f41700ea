#include "eval/ops/elementwise/broadcast.h"

#include <cstdint>
#include <cstring>

#include "model/attrs.h"
#include "model/buffer_pool.h"

namespace bnorm::eval {

std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims) {
  const int64_t total = product(out_dims);
  std::vector<int64_t> out(static_cast<size_t>(total));
  if (total == 0) return out;
  const size_t rank = out_dims.size();
  const std::vector<int64_t> st = broadcast_strides(dims, out_dims);
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; ++o) {
    out[o] = off;
    for (size_t d = rank; d-- > 0;) {
      off += st[d];
      if (++idx[d] < out_dims[d]) break;
      off -= st[d] * idx[d];
      idx[d] = 0;
    }
  }
  return out;
}

namespace {

// One output row of remap: element j from x's element base + last[j], or
// the fill where the map says -1 (or the row is outside). U: an unsigned
// integer of the element's size (a copy of the bits; a library memcpy per
// element cost most of a nearest upsampling).
template <class U>
void remap_row(uint8_t* dst, const uint8_t* src, int64_t base, const std::vector<int64_t>& last, bool inside,
               const uint8_t* pad) {
  U fill;
  std::memcpy(&fill, pad, sizeof(U));
  const int64_t n = static_cast<int64_t>(last.size());
  for (int64_t j = 0; j < n; ++j) {
    U v = fill;
    if (inside && last[j] >= 0) std::memcpy(&v, src + (base + last[j]) * static_cast<int64_t>(sizeof(U)), sizeof(U));
    std::memcpy(dst + j * static_cast<int64_t>(sizeof(U)), &v, sizeof(U));
  }
}

}  // namespace

Tensor remap(const Tensor& x, const std::vector<std::vector<int64_t>>& maps, const std::vector<uint8_t>& fill) {
  const size_t rank = maps.size();
  if (rank != x.dims.size()) fail(ErrorKind::input, "{} index maps for a rank {} tensor", rank, x.dims.size());
  std::vector<int64_t> dims(rank);
  for (size_t k = 0; k < rank; ++k) dims[k] = static_cast<int64_t>(maps[k].size());
  Tensor out = tensor_for_overwrite(x.dtype, dims);  // every element is written below
  const size_t es = dtype_size(x.dtype);
  const std::vector<uint8_t> blank(es, 0);
  const uint8_t* pad = fill.size() == es ? fill.data() : blank.data();
  const uint8_t* src = x.bytes.data();
  uint8_t* dst = out.bytes.data();
  if (rank == 0) {
    std::memcpy(dst, src, es);
    return out;
  }
  const int64_t total = out.numel();
  if (total == 0) return out;
  std::vector<int64_t> stride(rank, 1);
  for (size_t k = rank - 1; k-- > 0;) stride[k] = stride[k + 1] * x.dims[k + 1];
  const std::vector<int64_t>& last = maps[rank - 1];
  const auto inner = static_cast<int64_t>(last.size());
  bool whole_rows = inner == x.dims[rank - 1];
  for (int64_t j = 0; whole_rows && j < inner; ++j) whole_rows = last[j] == j;
  std::vector<int64_t> idx(rank - 1, 0);
  for (int64_t o = 0; o < total; o += inner, dst += inner * es) {
    int64_t base = 0;
    bool inside = true;
    for (size_t k = 0; k + 1 < rank; ++k) {
      const int64_t m = maps[k][idx[k]];
      inside = inside && m >= 0;
      base += m * stride[k];
    }
    if (inside && whole_rows) {
      std::memcpy(dst, src + base * es, inner * es);
    } else if (es == 4) {
      remap_row<uint32_t>(dst, src, base, last, inside, pad);
    } else if (es == 2) {
      remap_row<uint16_t>(dst, src, base, last, inside, pad);
    } else if (es == 8) {
      remap_row<uint64_t>(dst, src, base, last, inside, pad);
    } else if (es == 1) {
      remap_row<uint8_t>(dst, src, base, last, inside, pad);
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        const bool here = inside && last[j] >= 0;
        std::memcpy(dst + j * es, here ? src + (base + last[j]) * es : pad, es);
      }
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> legacy_b_dims(const OpContext& ctx, const Tensor& a, const Tensor& b) {
  if (ctx.version >= 7) return b.dims;
  if (attr_int(*ctx.node, "broadcast", 0) == 0) {
    if (a.dims != b.dims) {
      fail(ErrorKind::input, "inputs have shapes {} and {}, which must be equal without 'broadcast'",
           shape_str(a.dims), shape_str(b.dims));
    }
    return b.dims;
  }
  if (!find_attr(*ctx.node, "axis")) return b.dims;
  const auto rank = static_cast<int64_t>(a.dims.size());
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), rank);
  if (axis + static_cast<int64_t>(b.dims.size()) > rank) {
    fail(ErrorKind::input, "B of shape {} does not fit A of shape {} at axis {}", shape_str(b.dims),
         shape_str(a.dims), axis);
  }
  std::vector<int64_t> dims(static_cast<size_t>(axis), 1);
  dims.insert(dims.end(), b.dims.begin(), b.dims.end());
  dims.resize(a.dims.size(), 1);
  return dims;
}

}  // namespace bnorm::eval
