// The attribute reading and geometry of geometry.h shared by Conv and
// ConvTranspose.
#include "eval/ops/nn/conv/geometry.h"

#include <algorithm>
#include <climits>

#include "eval/run/numeric.h"
#include "model/attrs.h"

namespace bnorm::eval {

ConvAttrs read_conv_attrs(const onnx::NodeProto& node, size_t nd) {
  ConvAttrs a;
  a.stride = attr_ints(node, "strides").value_or(std::vector<int64_t>(nd, 1));
  a.dil = attr_ints(node, "dilations").value_or(std::vector<int64_t>(nd, 1));
  a.out_pad = attr_ints(node, "output_padding").value_or(std::vector<int64_t>(nd, 0));
  const auto pads = attr_ints(node, "pads").value_or(std::vector<int64_t>(2 * nd, 0));
  a.auto_pad = attr_string(node, "auto_pad", "NOTSET");
  if (a.stride.size() != nd || a.dil.size() != nd || pads.size() != 2 * nd || a.out_pad.size() != nd) {
    fail(ErrorKind::input, "strides, dilations, pads or output_padding do not match {} spatial dims", nd);
  }
  // Bounded so that every output size below is computed without overflow
  // (X's and W's dims are bounded by max_tensor_bytes()).
  constexpr int64_t kMaxAttr = INT32_MAX;
  auto within = [&](const std::vector<int64_t>& v, int64_t lo) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x >= lo && x <= kMaxAttr; });
  };
  if (!within(a.stride, 1) || !within(a.dil, 1) || !within(pads, 0) || !within(a.out_pad, 0)) {
    fail(ErrorKind::input, "strides and dilations must be 1 to {}, pads and output_padding 0 to {}", kMaxAttr,
         kMaxAttr);
  }
  a.pad_begin.assign(pads.begin(), pads.begin() + nd);
  a.pad_end.assign(pads.begin() + nd, pads.end());
  if (a.auto_pad == "VALID") {
    std::fill(a.pad_begin.begin(), a.pad_begin.end(), 0);
    std::fill(a.pad_end.begin(), a.pad_end.end(), 0);
  } else if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER") {
    fail(ErrorKind::input, "auto_pad '{}' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", a.auto_pad);
  }
  return a;
}

void check_conv_ranks(const Tensor& x, const Tensor& w) {
  if (x.dims.size() < 3 || x.dims.size() > 5 || w.dims.size() != x.dims.size()) {
    fail(ErrorKind::unsupported, "convolution of X {} with W {}: only 1-D to 3-D convolutions are supported",
         shape_str(x.dims), shape_str(w.dims));
  }
}

void fill_geometry(ConvGeometry& g, const ConvAttrs& a, const Tensor& x, const Tensor& w) {
  const size_t nd = x.dims.size() - 2, lead = kDims - nd;
  for (size_t d = 0; d < kDims; ++d) {
    const bool real = d >= lead;
    g.in[d] = real ? x.dims[2 + d - lead] : 1;
    g.kernel[d] = real ? w.dims[2 + d - lead] : 1;
    g.stride[d] = real ? a.stride[d - lead] : 1;
    g.dil[d] = real ? a.dil[d - lead] : 1;
    g.pad[d] = real ? a.pad_begin[d - lead] : 0;
    g.out[d] = 1;
  }
}

std::vector<int64_t> conv_out_dims(const Tensor& x, int64_t m, const ConvGeometry& g) {
  std::vector<int64_t> dims{x.dims[0], m};
  for (size_t d = kDims - (x.dims.size() - 2); d < kDims; ++d) dims.push_back(g.out[d]);
  return dims;
}

}  // namespace bnorm::eval
