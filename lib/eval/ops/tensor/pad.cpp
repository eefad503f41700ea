// Pad, for any element type.
//
// Contract: pads are [x1_begin, x2_begin, ..., x1_end, x2_end], from the
// `paddings` attribute (1; `pads` read there too), the `pads` attribute
// (2..10) or input 1 (11+),
// over every axis or (18+) over the axes of optional input 3. A negative
// pad removes elements. Modes: constant (the `value` attribute before 11,
// optional scalar input 2 from 11; default 0), edge (repeat the border),
// reflect (mirror without the border), wrap (19+: cyclic).
#include <cstdlib>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/tensor/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

enum class PadMode { constant, edge, reflect, wrap };

PadMode pad_mode(const OpContext& ctx) {
  const std::string m = attr_string(*ctx.node, "mode", "constant");
  if (m == "constant") return PadMode::constant;
  if (m == "edge") return PadMode::edge;
  if (m == "reflect") return PadMode::reflect;
  if (m == "wrap" && ctx.version >= 19) return PadMode::wrap;
  fail(ErrorKind::unsupported, "Pad mode '{}' is not supported", m);
}

// Source index along one axis for each output index; -1: the constant.
std::vector<int64_t> pad_map(int64_t dim, int64_t begin, int64_t end, PadMode mode) {
  const int64_t n = dim + begin + end;
  if (n < 0) fail(ErrorKind::input, "pads {} and {} remove more than the {} elements of an axis", begin, end, dim);
  std::vector<int64_t> m(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = i - begin;
    if (j < 0 || j >= dim) {
      if (mode != PadMode::constant && dim == 0) fail(ErrorKind::input, "cannot pad an empty axis but with a constant");
      const int64_t period = 2 * (dim - 1);
      switch (mode) {
        case PadMode::constant: j = -1; break;
        case PadMode::edge: j = j < 0 ? 0 : dim - 1; break;
        case PadMode::wrap: j = ((j % dim) + dim) % dim; break;
        case PadMode::reflect:
          if (dim == 1) {
            j = 0;
          } else {
            j = ((j % period) + period) % period;
            if (j >= dim) j = period - j;
          }
          break;
      }
    }
    m[i] = j;
  }
  return m;
}

// The padding value as one element of `t`.
std::vector<uint8_t> pad_value(const OpContext& ctx, DType t) {
  if (ctx.version >= 11) {
    const Tensor* v = ctx.input(2);
    if (!v) return {};
    if (v->numel() != 1 || v->dtype != t) {
      fail(ErrorKind::input, "input 'constant_value' must be one {} value, is {} of shape {}", dtype_name(t),
           dtype_name(v->dtype), shape_str(v->dims));
    }
    return v->bytes;
  }
  const double value = attr_float(*ctx.node, "value", 0.0f);
  return make_any<double>(t, {}, {value}).bytes;
}

}  // namespace

Tensors op_pad(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> pads;
  if (ctx.version >= 11) {
    pads = read_ints(ctx.required(1, "pads"), "pads");
  } else {
    // Pad-1 names the attribute `paddings`, Pad-2 `pads`, with one layout and
    // meaning; exporters of the opset-1 era wrote `pads` in Pad-1 nodes too
    // (Windows ML's style-transfer models), read the same way.
    auto read = attr_ints(*ctx.node, ctx.version < 2 ? "paddings" : "pads");
    if (!read && ctx.version < 2) read = attr_ints(*ctx.node, "pads");
    if (!read) fail(ErrorKind::input, "attribute '{}' is missing", ctx.version < 2 ? "paddings" : "pads");
    pads = *read;
  }
  std::vector<int64_t> axes;
  if (const Tensor* t = ctx.version >= 18 ? ctx.input(3) : nullptr) {
    for (int64_t a : read_ints(*t, "axes")) axes.push_back(normalize_axis(a, rank));
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  const auto n = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * n) {
    fail(ErrorKind::input, "{} pads for {} axes, which need {}", pads.size(), n, 2 * n);
  }
  const PadMode mode = pad_mode(ctx);
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < n; ++i) {
    begin[axes[i]] = pads[i];
    end[axes[i]] = pads[n + i];
  }
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) maps[k] = pad_map(x.dims[k], begin[k], end[k], mode);
  return one_tensor(remap(x, maps, pad_value(ctx, x.dtype)));
}

}  // namespace bnorm::eval
