#include "eval/run/numeric.h"

#include <algorithm>

namespace bnorm::eval {

std::vector<int64_t> read_ints(const Tensor& t, const char* what) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::int64) {
    if (!out.empty()) std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
  } else if (t.dtype == DType::int32) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int32_t>()[i];
  } else {
    fail(ErrorKind::input, "input '{}' must be int64, not {}", what, dtype_name(t.dtype));
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) fail(ErrorKind::input, "{} {} is out of range for rank {}", what, axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail(ErrorKind::input, "shapes {} and {} do not broadcast", shape_str(a), shape_str(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> strides(out_dims.size(), 0);
  int64_t s = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t i = dims.size() - 1 - k;
    const size_t o = out_dims.size() - 1 - k;
    strides[o] = dims[i] == 1 ? 0 : s;
    s *= dims[i];
  }
  return strides;
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) p *= dims[i];
  return p;
}

}  // namespace bnorm::eval
