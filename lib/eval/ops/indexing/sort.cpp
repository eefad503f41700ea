// Ops that order elements: TopK, ArgMax, ArgMin, Unique. Values are
// compared exactly (floating types as double, integers as int64 or uint64).
//
// Contract per op (versions in parentheses):
//   TopK (1, 10, 11, 24)  the k largest (or, 11+ with largest = 0,
//       smallest) elements along `axis` (default -1), values and int64
//       indices, of shape x.dims with dims[axis] = k. k is an attribute at 1,
//       input K (one int64) from 10; 0 <= k <= dims[axis]. float16/float/
//       double at 1 and 10, every numeric type but bfloat16 at 11, bfloat16
//       too at 24 (its only change). Equal values: the lower index first.
//   ArgMax, ArgMin (1, 11, 12, 13)  the index of the first (12+ with
//       select_last_index: the last) extreme along `axis` (default 0), int64,
//       keepdims (default 1) keeping the axis as 1. bfloat16 from 13. An
//       empty axis is Error(input).
//   Unique (11)  the distinct elements of the flattened input, or the
//       distinct slices along `axis`, sorted ascending (slices
//       lexicographically in C order) or (sorted = 0) in order of first
//       occurrence; with the index of each one's first occurrence, the
//       inverse map and the counts.
// Decisions: NaN ranks above every number, and NaNs equal each other: TopK
// returns NaNs first when largest (PyTorch's order), Unique collapses them
// into one, sorted last (numpy's equal_nan). ArgMax and ArgMin both pick a
// NaN when there is one, as numpy's argmax and argmin do. TopK with
// sorted = 0 (order undefined by the spec) returns the sorted order. -0.0
// and 0.0 are equal. Attributes of later versions given at earlier ones
// (largest, sorted before 11, select_last_index before 12) are Error(input).
// A negative axis counts from the back at every version (the texts of
// ArgMax-1 and TopK-1/10 do not mention it; TopK's default axis is -1).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/broadcast.h"
#include "eval/ops/indexing/ops.h"

namespace bnorm::eval {

namespace {

// Calls f(keys): x's elements as exactly comparable values.
template <typename F>
void with_keys(const Tensor& x, F&& f) {
  switch (x.dtype) {
    case DType::uint8:
    case DType::uint16:
    case DType::uint32:
    case DType::uint64: f(load_values<uint64_t>(x)); break;
    case DType::int8:
    case DType::int16:
    case DType::int32:
    case DType::int64:
    case DType::boolean: f(load_values<int64_t>(x)); break;
    default:
      if (!is_floating(x.dtype)) fail(ErrorKind::unsupported, "elements of type {}", dtype_name(x.dtype));
      f(load_values<double>(x));
  }
}

// A total order: NaN above every number and equal to NaN.
template <typename K>
bool key_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

void reject_from(const OpContext& ctx, const char* attr, int since, int64_t fallback) {
  if (ctx.version < since && attr_int(*ctx.node, attr, fallback) != fallback) {
    fail(ErrorKind::input, "'{}' is an attribute from version {}, not of version {}", attr, since, ctx.version);
  }
}

int64_t read_k(const OpContext& ctx) {
  if (ctx.version < 10) {
    if (!find_attr(*ctx.node, "k")) fail(ErrorKind::input, "attribute 'k' is missing");
    return attr_int(*ctx.node, "k", 0);
  }
  const Tensor& kt = ctx.required(1, "K");
  if (kt.dtype != DType::int64 || kt.numel() != 1) fail(ErrorKind::input, "input 'K' must hold one int64");
  return kt.data<int64_t>()[0];
}

}  // namespace

Tensors op_top_k(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const bool typed = ctx.version >= 11 ? is_numeric_type(x.dtype) && (x.dtype != DType::bfloat16 || ctx.version >= 24)
                                       : x.dtype == DType::float16 || x.dtype == DType::float32 || x.dtype == DType::float64;
  if (!typed) fail(ErrorKind::input, "TopK-{} does not take {} input", ctx.version, dtype_name(x.dtype));
  reject_from(ctx, "largest", 11, 1);
  reject_from(ctx, "sorted", 11, 1);
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", -1), static_cast<int64_t>(x.dims.size()));
  const bool largest = attr_int(*ctx.node, "largest", 1) != 0;
  const int64_t k = read_k(ctx), dim = x.dims[axis];
  if (k < 0 || k > dim) fail(ErrorKind::input, "k = {} is not in [0, {}] (axis {})", k, dim, axis);
  std::vector<int64_t> dims = x.dims;
  dims[axis] = k;
  Tensors out{Tensor(x.dtype, dims), Tensor(DType::int64, dims)};
  const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis + 1);
  const size_t es = dtype_size(x.dtype);
  with_keys(x, [&](const auto& keys) {
    std::vector<int64_t> order(static_cast<size_t>(dim));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        auto at = [&](int64_t i) { return (o * dim + i) * inner + in; };
        auto before = [&](int64_t a, int64_t b) {
          const auto ka = keys[at(a)], kb = keys[at(b)];
          if (largest ? key_less(kb, ka) : key_less(ka, kb)) return true;
          if (largest ? key_less(ka, kb) : key_less(kb, ka)) return false;
          return a < b;
        };
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t dst = (o * k + j) * inner + in;
          std::memcpy(out[0].bytes.data() + dst * es, x.bytes.data() + at(order[j]) * es, es);
          out[1].data<int64_t>()[dst] = order[j];
        }
      }
    }
  });
  return out;
}

namespace {

Tensors arg_extreme(const OpContext& ctx, bool max) {
  const Tensor& x = ctx.required(0, "data");
  if (!is_numeric_type(x.dtype) || (x.dtype == DType::bfloat16 && ctx.version < 13)) {
    fail(ErrorKind::input, "version {} does not take {} input", ctx.version, dtype_name(x.dtype));
  }
  reject_from(ctx, "select_last_index", 12, 0);
  const int64_t axis = normalize_axis(attr_int(*ctx.node, "axis", 0), static_cast<int64_t>(x.dims.size()));
  const bool last = attr_int(*ctx.node, "select_last_index", 0) != 0;
  const int64_t dim = x.dims[axis];
  if (dim == 0) fail(ErrorKind::input, "axis {} is empty", axis);
  std::vector<int64_t> dims = x.dims;
  dims[axis] = 1;
  if (attr_int(*ctx.node, "keepdims", 1) == 0) dims.erase(dims.begin() + axis);
  Tensor out(DType::int64, dims);
  const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis + 1);
  with_keys(x, [&](const auto& keys) {
    using K = typename std::decay_t<decltype(keys)>::value_type;
    auto wins = [&](K a, K b) {  // a strictly beats b; NaN beats numbers
      if constexpr (std::is_floating_point_v<K>) {
        if (std::isnan(b)) return false;
        if (std::isnan(a)) return true;
      }
      return max ? a > b : a < b;
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        const K* col = keys.data() + o * dim * inner + in;
        int64_t best = 0;
        for (int64_t i = 1; i < dim; ++i) {
          if (wins(col[i * inner], col[best * inner]) || (last && !wins(col[best * inner], col[i * inner]))) best = i;
        }
        out.data<int64_t>()[o * inner + in] = best;
      }
    }
  });
  return one_tensor(std::move(out));
}

}  // namespace

Tensors op_arg_max(const OpContext& ctx) { return arg_extreme(ctx, true); }

Tensors op_arg_min(const OpContext& ctx) { return arg_extreme(ctx, false); }

namespace {

Tensor int64s(const std::vector<int64_t>& v) {
  Tensor t(DType::int64, {static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

// Unique's outputs other than Y: per distinct slice its first index and
// count, and per slice of x its distinct slice's position.
struct Groups {
  std::vector<int64_t> first, inverse, counts;
};

// The distinct slices of keys viewed as [outer, n, inner] (slice i is
// keys[:, i, :]), in ascending lexicographic order.
template <typename K>
Groups sorted_groups(const std::vector<K>& keys, int64_t outer, int64_t n, int64_t inner) {
  auto cmp = [&](int64_t a, int64_t b) {  // -1, 0 or 1
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        const K ka = keys[(o * n + a) * inner + in], kb = keys[(o * n + b) * inner + in];
        if (key_less(ka, kb)) return -1;
        if (key_less(kb, ka)) return 1;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  // Stable: the first slice of each group is its first occurrence.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  Groups g;
  g.inverse.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || cmp(order[i - 1], order[i]) != 0) {
      g.first.push_back(order[i]);
      g.counts.push_back(0);
    }
    g.inverse[order[i]] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.counts.back();
  }
  return g;
}

// Reorders the groups by first occurrence (sorted = 0).
void by_first_occurrence(Groups& g) {
  std::vector<int64_t> order(g.first.size()), position(g.first.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
  Groups r;
  for (size_t p = 0; p < order.size(); ++p) {
    position[order[p]] = static_cast<int64_t>(p);
    r.first.push_back(g.first[order[p]]);
    r.counts.push_back(g.counts[order[p]]);
  }
  for (int64_t& i : g.inverse) i = position[i];
  r.inverse = std::move(g.inverse);
  g = std::move(r);
}

}  // namespace

Tensors op_unique(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dtype == DType::bfloat16) fail(ErrorKind::input, "Unique-11 does not take bfloat16 input");
  const bool by_axis = find_attr(*ctx.node, "axis") != nullptr;
  const int64_t axis = by_axis ? normalize_axis(attr_int(*ctx.node, "axis", 0), static_cast<int64_t>(x.dims.size())) : 0;
  const int64_t sorted = attr_int(*ctx.node, "sorted", 1);
  if (sorted != 0 && sorted != 1) fail(ErrorKind::input, "sorted = {} must be 0 or 1", sorted);
  const std::vector<int64_t> flat_dims = by_axis ? x.dims : std::vector<int64_t>{x.numel()};
  const int64_t n = flat_dims[axis], outer = product(flat_dims, 0, axis), inner = product(flat_dims, axis + 1);
  Groups g;
  with_keys(x, [&](const auto& keys) { g = sorted_groups(keys, outer, n, inner); });
  if (sorted == 0) by_first_occurrence(g);
  std::vector<std::vector<int64_t>> maps{std::vector<int64_t>(static_cast<size_t>(outer)), g.first,
                                         std::vector<int64_t>(static_cast<size_t>(inner))};
  std::iota(maps[0].begin(), maps[0].end(), int64_t{0});
  std::iota(maps[2].begin(), maps[2].end(), int64_t{0});
  Tensor view = x;
  view.dims = {outer, n, inner};
  Tensor y = remap(view, maps);
  y.dims = flat_dims;
  y.dims[axis] = static_cast<int64_t>(g.first.size());
  return {y, int64s(g.first), int64s(g.inverse), int64s(g.counts)};
}

}  // namespace bnorm::eval
