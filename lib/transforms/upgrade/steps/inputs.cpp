// Reading a node's constant inputs, for steps that turn an input into an
// attribute: the input must be an initializer or a Constant's output.
#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "model/attrs.h"
#include "model/node_label.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

std::optional<Tensor> constant_input(const NormSite& s, int index) {
  if (index >= s.node.input_size() || s.node.input(index).empty()) return std::nullopt;
  const auto c = s.env->index->constant(*s.scope, s.node.input(index));
  if (!c) return std::nullopt;
  return decode_tensor(*c->tensor);
}

std::vector<int64_t> constant_ints(const NormSite& s, int index, const std::string& what, const std::string& why) {
  const std::string name = index < s.node.input_size() ? s.node.input(index) : "";
  const auto t = constant_input(s, index);
  if (!t) {
    throw Error(ErrorKind::unsupported,
                fmt::format("input '{}' ({}) is not a constant (initializer or Constant), so it cannot {}", name, what,
                            why))
        .at_node(node_label(s.node), s.node.op_type(), s.version);
  }
  // Integers as they are: through a double, INT64_MAX (exporters' "to the
  // end") rounded up past the int64 range and came back as INT64_MIN.
  auto out = t->to_i64();
  if (!out) {
    throw Error(ErrorKind::unsupported, fmt::format("input '{}' ({}) holds values that are no int64 (fractions, "
                                                    "NaN, infinities or beyond int64's range)", name, what))
        .at_node(node_label(s.node), s.node.op_type(), s.version);
  }
  return *out;
}

void drop_input(onnx::NodeProto& n, int index) {
  if (index >= n.input_size()) return;
  n.set_input(index, "");
  while (n.input_size() > 0 && n.input(n.input_size() - 1).empty()) n.mutable_input()->RemoveLast();
}

void set_input(onnx::NodeProto& n, int index, const std::string& value) {
  while (n.input_size() <= index) n.add_input("");
  n.set_input(index, value);
}


[[noreturn]] void refuse(const NormSite& s, const std::string& why) {
  throw Error(ErrorKind::unsupported, why).at_node(node_label(s.node), s.node.op_type(), s.version);
}

}  // namespace bnorm::steps
