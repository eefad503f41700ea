// QuantizeLinear / DequantizeLinear 13 -> 10..12 (ONNX 1.12: "No Adapter
// From Version $13 for DequantizeLinear"; going up its adapter is kept).
// Versions 19 (types, saturate), 21 (block_size, output_dtype) and 23
// (precision) are the table's `types`/`attrs` rows: crossed above 17 first,
// their attributes dropped at their defaults, other values refused.
//
//   QuantizeLinear-10:  y = saturate(round(x / s) + zp)   s, zp scalars
//   QuantizeLinear-13:  the same per tensor (s, zp scalars or one value),
//                       or per axis: s, zp 1-D along `axis` (default 1)
//   DequantizeLinear-10/13: x' = (x - zp) * s, the same forms
//
//   Before (13): DequantizeLinear(x, s [1], zp [1]) axis = 1
//   After  (10): DequantizeLinear(x, s' [], zp' [])
//
// Down: `axis` dropped; a scale or zero point of one value but rank 1 is
// made a scalar (a constant: a scalar copy; otherwise Reshape to []);
// per-axis (more than one value, or a size unknown) is refused, naming the
// node and the input. Element types must exist at the target. Formula:
// unchanged.
#include <fmt/format.h>

#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void quantize_linear_convert(NormSite& s) {
  const int to = schema_version(s.node.op_type(), s.target_opset);
  onnx::NodeProto& n = s.node;
  if (to >= 13 || s.version < 13) {
    s.version = to;
    return;
  }
  refuse_missing_types(s, to);
  std::vector<int> reshape;  // inputs of one value but rank 1
  for (int i : {1, 2}) {
    if (i >= n.input_size() || n.input(i).empty()) continue;
    const auto dims = s.dims_of(n.input(i));
    if (!dims) refuse(s, fmt::format("the shape of input '{}' is unknown; below version 13 it must be a scalar", n.input(i)));
    int64_t numel = 1;
    for (int64_t d : *dims) numel = d < 0 ? -1 : numel * d;
    if (dims->empty()) continue;
    if (numel != 1) {
      refuse(s, fmt::format("input '{}' has shape [{}]: a per-axis {} has no form below version 13 (per tensor only)",
                            n.input(i), fmt::join(*dims, ", "), i == 1 ? "scale" : "zero point"));
    }
    reshape.push_back(i);
  }
  if (const auto* a = find_attr(n, "axis")) s.report.dropped.push_back(fmt::format("axis = {}", a->i()));
  remove_attr(n, "axis");
  for (int i : reshape) {
    const std::string old = n.input(i);
    if (auto c = constant_input(s, i)) {
      Tensor t = *c;
      t.dims.clear();
      t.name = s.fresh(old + "_scalar");
      s.initializers.push_back(to_proto(t));
      n.set_input(i, t.name);
    } else {
      const std::string out = s.fresh(old + "_scalar");
      s.add_before("Reshape", {old, s.add_int64s(s.stem() + "_scalar_shape", {})}, {out});
      n.set_input(i, out);
    }
    s.report.set.push_back(fmt::format("'{}' as the scalar '{}'", old, n.input(i)));
  }
  s.version = to;
}

const Step quantize_linear{"quantize_linear", "quantize_linear", quantize_linear_convert, quantize_linear_convert};

}  // namespace bnorm::steps
