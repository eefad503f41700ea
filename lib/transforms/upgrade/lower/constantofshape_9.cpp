// ConstantOfShape-9/20/21/23 below opset 9, where it does not exist: its
// output becomes an initializer of that name, filled as the op fills it.
//
//   Before: Y = ConstantOfShape(S)  value = v (a one-element tensor; float 0 without one)
//   After:  initializer Y of dims S, every element v (v's type)
//
// Exact: the tensor holds the values the op computes. Preconditions (each
// an Error naming the node): S constant (an initializer or a Constant),
// int64, at most one dimension, no negative dim; v has one element. The
// report gives the initializer's size, which can be large (exporters build
// weights this way: onnx_light's ResNet-50 has 239 of them).
#include <fmt/format.h>

#include "model/tensor_proto.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_constantofshape_9(NormSite& s, int64_t) {
  const onnx::NodeProto n = s.node;
  if (const auto t = constant_input(s, 0); t && (t->dtype != DType::int64 || t->dims.size() > 1)) {
    refuse(s, fmt::format("the shape '{}' is not a 1-D int64 tensor", n.input(0)));
  }
  const std::vector<int64_t> dims = constant_ints(s, 0, "the shape", "be written as an initializer below opset 9");
  for (int64_t d : dims) {
    if (d < 0) refuse(s, fmt::format("the shape has a negative dim ({})", d));
  }
  Tensor value = Tensor::from_f64(DType::float32, {1}, {0.0});
  if (const auto* a = find_attr(n, "value")) {
    value = decode_tensor(a->t(), {});
    if (value.numel() != 1) refuse(s, fmt::format("attribute 'value' has {} elements, not 1", value.numel()));
  }
  Tensor out(value.dtype, dims, n.output(0));
  const size_t width = value.byte_size();
  for (size_t at = 0; at < out.bytes.size(); at += width) std::copy(value.bytes.begin(), value.bytes.end(), out.bytes.begin() + at);
  s.initializers.push_back(to_proto(out));
  s.report.added.push_back(fmt::format("initializer '{}' ({} [{}], {} bytes)", out.name, dtype_name(out.dtype),
                                       fmt::join(dims, ", "), out.byte_size()));
}

}  // namespace bnorm::steps
