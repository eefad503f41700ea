// Pad 1 <-> 2 <-> 11: where the padding amounts and the constant value live.
//
//   Pad-1:  Pad(X) paddings = [b1.., e1..] value = v mode
//   Pad-2:  Pad(X) pads     = [b1.., e1..] value = v mode
//   Pad-11: Pad(X, pads, constant_value?) mode      pads int64 [2 * rank]
//
// Up to 11: pads becomes an int64 initializer; a non-zero value becomes a
// scalar initializer of X's type (Error naming the node when X's type is
// unknown), zero (the default at every version) is left out.
// Down below 11: pads and constant_value must be constants (Error naming
// the node and the input otherwise); they become the attributes.
// 1 <-> 2 renames the attribute (same layout, same meaning). ONNX 1.12's
// converter has no adapter for either change. Formula: unchanged.
#include <fmt/format.h>

#include "core/error.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"
#include "model/node_label.h"

namespace bnorm::steps {

namespace {

Tensor constant_input(const NormSite& s, int index, const char* what) {
  const std::string& name = s.node.input(index);
  const auto c = s.env->index->constant(*s.scope, name);
  if (!c) {
    throw Error(ErrorKind::unsupported,
                fmt::format("input '{}' ({}) is not a constant, so it cannot become an attribute below version 11",
                            name, what))
        .at_node(node_label(s.node), "Pad", s.version);
  }
  return decode_tensor(*c->tensor);
}

}  // namespace

void pad_convert(NormSite& s) {
  const int from = s.version, to = schema_version("Pad", s.target_opset);
  onnx::NodeProto& n = s.node;
  std::vector<int64_t> pads;
  std::optional<double> value;
  if (from < 11) {
    const char* name = find_attr(n, "paddings") ? "paddings" : "pads";  // some Pad-1 files already say pads
    if (const auto* a = find_attr(n, name)) pads.assign(a->ints().begin(), a->ints().end());
    if (const auto* a = find_attr(n, "value")) value = a->f();
  } else if (to < 11) {
    if (n.input_size() > 1 && !n.input(1).empty()) {
      for (double v : constant_input(s, 1, "pads").to_f64()) pads.push_back(static_cast<int64_t>(v));
    }
    if (n.input_size() > 2 && !n.input(2).empty()) {
      const Tensor c = constant_input(s, 2, "constant_value");
      if (c.numel() != 1) {
        throw Error(ErrorKind::input, "input 'constant_value' must hold one value").at_node(node_label(n), "Pad", from);
      }
      value = c.to_f64()[0];
    }
  }
  remove_attr(n, "paddings");
  remove_attr(n, "pads");
  remove_attr(n, "value");
  if (to < 11) {
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    set_ints(n, to < 2 ? "paddings" : "pads", pads);
    s.report.set.push_back(fmt::format("{} as an attribute", to < 2 ? "paddings" : "pads"));
    if (value && *value != 0) {
      auto* a = n.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(static_cast<float>(*value));
    }
  } else if (from < 11) {
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    n.add_input(s.add_int64s(s.stem() + "_pads", pads));
    s.report.set.push_back(fmt::format("pads as input '{}'", n.input(1)));
    if (value && *value != 0) {
      const auto type = s.type_of(n.input(0));
      if (!type) {
        throw Error(ErrorKind::unsupported, "a non-zero constant value needs X's type, which is unknown")
            .at_node(node_label(n), "Pad", from);
      }
      Tensor t = Tensor::from_f64(*type, {}, {*value});
      t.name = s.fresh(s.stem() + "_constant_value");
      onnx::TensorProto p = to_proto(t);
      n.add_input(p.name());
      s.initializers.push_back(std::move(p));
      s.report.set.push_back(fmt::format("constant_value as input '{}'", n.input(2)));
    }
  }
  s.version = to;
}

const Step pad_2_11{"pad_2_11", "pad_2_11", pad_convert, pad_convert};

}  // namespace bnorm::steps
