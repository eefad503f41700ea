// Rules of the ops over spatial dims and matrices: Conv, DeformConv, ConvInteger,
// QLinearConv, ConvTranspose (output_shape, output_padding), MaxPool,
// AveragePool, LpPool (kernel_shape, pads, strides, dilations, auto_pad,
// ceil_mode), the global pools, Gemm, MatMul (numpy rules for 1-D and
// batch dims), MatMulInteger, QLinearMatMul, CausalConvWithState (output: the input's shape; present_state
// [batch, channels, k - 1] from the weight [channels, 1, k]).
//
//   out = floor((in + pad_begin + pad_end - ((k - 1) * dilation + 1)) / stride) + 1   (ceil with ceil_mode)
//   SAME_UPPER / SAME_LOWER: ceil(in / stride); VALID: pads 0
//   ConvTranspose: stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads; SAME: in * stride
#include <cmath>

#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
};

// Reads the window attributes for `n` spatial dims; false when they do not fit.
bool window(const NodeCtx& c, size_t n, std::optional<std::vector<int64_t>> kernel, Window& w) {
  if (!kernel || kernel->size() != n) return false;
  w.kernel = *kernel;
  w.strides = attr_ints(c.node, "strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = attr_ints(c.node, "dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = attr_ints(c.node, "pads").value_or(std::vector<int64_t>(2 * n, 0));
  w.auto_pad = attr_string(c.node, "auto_pad", "NOTSET");
  w.ceil_mode = attr_int(c.node, "ceil_mode", 0) != 0;
  if (w.strides.empty()) w.strides.assign(n, 1);
  if (w.dilations.empty()) w.dilations.assign(n, 1);
  if (w.pads.empty()) w.pads.assign(2 * n, 0);
  return w.strides.size() == n && w.dilations.size() == n && w.pads.size() == 2 * n;
}

InferredDim window_out(const InferredDim& in, const Window& w, size_t i) {
  if (!in.known()) return {};
  const int64_t s = w.strides[i], dk = (w.kernel[i] - 1) * w.dilations[i] + 1;
  if (s <= 0) return {};
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return InferredDim::of((in.value + s - 1) / s);
  const int64_t pads = w.auto_pad == "VALID" ? 0 : w.pads[i] + w.pads[i + w.kernel.size()];
  const int64_t span = in.value + pads - dk;
  if (span < 0) return {};
  int64_t out = (w.ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // With ceil_mode the last window must start inside the input or its begin padding.
  if (w.ceil_mode && (out - 1) * s >= in.value + (w.auto_pad == "VALID" ? 0 : w.pads[i])) --out;
  return InferredDim::of(out);
}

void spatial(NodeCtx& c, const InferredDim& channels, std::optional<std::vector<int64_t>> kernel, int32_t elem, bool pool) {
  const auto* x = c.shape(0);
  if (!x || x->size() < 2) {
    c.set(0, elem, std::nullopt);
    return;
  }
  const size_t n = x->size() - 2;
  std::vector<InferredDim> d{(*x)[0], channels};
  Window w;
  if (!window(c, n, kernel, w)) {
    d.resize(x->size());
    c.set(0, elem, d);
    return;
  }
  for (size_t i = 0; i < n; ++i) d.push_back(window_out((*x)[2 + i], w, i));
  c.set(0, elem, d);
  if (pool && c.out.size() > 1) c.set(1, onnx::TensorProto::INT64, d);
}

std::optional<std::vector<int64_t>> kernel_of(const NodeCtx& c, size_t weight) {
  if (auto k = attr_ints(c.node, "kernel_shape"); k && !k->empty()) return k;
  const auto* w = c.shape(weight);
  if (!w || w->size() < 2) return std::nullopt;
  std::vector<int64_t> k;
  for (size_t i = 2; i < w->size(); ++i) {
    if (!(*w)[i].known()) return std::nullopt;
    k.push_back((*w)[i].value);
  }
  return k;
}

void conv(NodeCtx& c, size_t weight, int32_t elem) {
  const auto* w = c.shape(weight);
  spatial(c, w && !w->empty() ? (*w)[0] : InferredDim{}, kernel_of(c, weight), elem, false);
}

void conv_transpose(NodeCtx& c) {
  const auto *x = c.shape(0), *w = c.shape(1);
  if (!x || x->size() < 2) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  const size_t n = x->size() - 2;
  const int64_t group = attr_int(c.node, "group", 1);
  InferredDim m = w && w->size() > 1 && (*w)[1].known() ? InferredDim::of((*w)[1].value * group) : InferredDim{};
  std::vector<InferredDim> d{(*x)[0], m};
  Window win;
  if (!window(c, n, kernel_of(c, 1), win)) {
    d.resize(x->size());
    c.set(0, c.elem(0), d);
    return;
  }
  const auto out_shape = attr_ints(c.node, "output_shape");
  auto out_pad = attr_ints(c.node, "output_padding").value_or(std::vector<int64_t>(n, 0));
  if (out_pad.size() != n) out_pad.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (out_shape && out_shape->size() == n) {
      d.push_back(InferredDim::of((*out_shape)[i]));
      continue;
    }
    const InferredDim& in = (*x)[2 + i];
    if (!in.known()) {
      d.emplace_back();
      continue;
    }
    const int64_t s = win.strides[i];
    if (win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER") {
      d.push_back(InferredDim::of(in.value * s));
      continue;
    }
    const int64_t pads = win.auto_pad == "VALID" ? 0 : win.pads[i] + win.pads[i + n];
    d.push_back(InferredDim::of(s * (in.value - 1) + out_pad[i] + (win.kernel[i] - 1) * win.dilations[i] + 1 - pads));
  }
  c.set(0, c.elem(0), d);
}

void global_pool(NodeCtx& c) {
  const auto* x = c.shape(0);
  if (!x || x->size() < 2) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  std::vector<InferredDim> d(x->size(), InferredDim::of(1));
  d[0] = (*x)[0], d[1] = (*x)[1];
  c.set(0, c.elem(0), d);
}

void gemm(NodeCtx& c) {
  const auto *a = c.shape(0), *b = c.shape(1);
  std::vector<InferredDim> d(2);
  const bool ta = attr_int(c.node, "transA", 0) != 0, tb = attr_int(c.node, "transB", 0) != 0;
  if (a && a->size() == 2) d[0] = (*a)[ta ? 1 : 0];
  if (b && b->size() == 2) d[1] = (*b)[tb ? 0 : 1];
  c.set(0, c.elem(0), d);
}

void matmul(NodeCtx& c, int32_t elem) {
  const auto *a = c.shape(0), *b = c.shape(1);
  if (!a || !b || a->empty() || b->empty()) {
    c.set(0, elem, std::nullopt);
    return;
  }
  std::vector<InferredDim> x = *a, y = *b;
  const bool a1 = x.size() == 1, b1 = y.size() == 1;
  if (a1) x.insert(x.begin(), InferredDim::of(1));
  if (b1) y.push_back(InferredDim::of(1));
  const std::vector<InferredDim> xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  std::vector<InferredDim> d = *broadcast({&xb, &yb});
  if (!a1) d.push_back(x[x.size() - 2]);
  if (!b1) d.push_back(y.back());
  c.set(0, elem, d);
}

void causal_conv_with_state(NodeCtx& c) {
  const auto* x = c.shape(0);
  const auto* w = c.shape(1);
  const int32_t e = c.elem(0);
  c.set(0, e, x ? *x : std::vector<InferredDim>(3));
  InferredDim batch, channels, carry;
  if (x && x->size() == 3) {
    batch = (*x)[0];
    channels = (*x)[1];
  }
  if (w && w->size() == 3) {
    if (channels.unknown()) channels = (*w)[0];
    if ((*w)[2].known() && (*w)[2].value >= 1) carry = InferredDim::of((*w)[2].value - 1);
  }
  c.set(1, e, std::vector<InferredDim>{batch, channels, carry});
}

}  // namespace

void add_nn_rules(RuleTable& t) {
  t["Conv"] = [](NodeCtx& c) { conv(c, 1, c.elem(0)); };
  t["ConvInteger"] = [](NodeCtx& c) { conv(c, 1, onnx::TensorProto::INT32); };
  t["QLinearConv"] = [](NodeCtx& c) { conv(c, 3, c.elem(7)); };
  t["DeformConv"] = [](NodeCtx& c) { conv(c, 1, c.elem(0)); };
  t["ConvTranspose"] = conv_transpose;
  t["CausalConvWithState"] = causal_conv_with_state;
  t["MaxPool"] = t["AveragePool"] = t["LpPool"] = [](NodeCtx& c) {
    const auto* x = c.shape(0);
    spatial(c, x && x->size() > 1 ? (*x)[1] : InferredDim{}, attr_ints(c.node, "kernel_shape"), c.elem(0), true);
  };
  t["GlobalAveragePool"] = t["GlobalMaxPool"] = t["GlobalLpPool"] = global_pool;
  t["Gemm"] = gemm;
  t["MatMul"] = [](NodeCtx& c) { matmul(c, c.elem(0)); };
  t["MatMulInteger"] = [](NodeCtx& c) { matmul(c, onnx::TensorProto::INT32); };
  t["QLinearMatMul"] = [](NodeCtx& c) {
    const int32_t elem = c.elem(7);
    const auto saved = c.in;
    c.in = {c.input(0), c.input(3)};
    matmul(c, elem);
    c.in = saved;
  };
}

}  // namespace bnorm::shape_infer
