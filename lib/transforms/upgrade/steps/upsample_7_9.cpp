// Upsample 7/8 <-> 9: where the scales live.
//
//   Upsample-7: Upsample(X) scales = [s1, ..., sn] mode      (floats attribute)
//   Upsample-9: Upsample(X, scales) mode                     (float input [n])
//
// Up to 9: the attribute becomes a float initializer input.
// Down below 9: the input must be a constant (Error naming the node and
// the input otherwise) and becomes the attribute. ONNX 1.12's 9 -> 8
// adapter asserted when the scales input fed more than one Upsample
// (ir.h eraseOutput) and on a non-constant input; bnorm converts Upsample
// across 9 itself in both directions. Upsample-1 (experimental) <-> 7 stays
// ONNX's adapter. Formula: unchanged.
#include <fmt/format.h>

#include "core/error.h"
#include "model/node_label.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

void upsample_7_9(NormSite& s) {
  const int from = s.version, to = schema_version("Upsample", s.target_opset);
  onnx::NodeProto& n = s.node;
  std::vector<float> scales;
  if (from < 9) {
    const auto* a = find_attr(n, "scales");
    if (!a) refuse(s, "attribute 'scales' is missing");
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    const auto t = constant_input(s, 1);
    if (!t) {
      const std::string name = n.input_size() > 1 ? n.input(1) : "";
      throw Error(ErrorKind::unsupported,
                  fmt::format("input '{}' (scales) is not a constant (initializer or Constant), so it cannot become "
                              "an attribute below version 9",
                              name))
          .at_node(node_label(n), "Upsample", from);
    }
    for (double v : t->to_f64()) scales.push_back(static_cast<float>(v));
  }
  remove_attr(n, "scales");
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  if (to < 9) {
    auto* a = n.add_attribute();
    a->set_name("scales");
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float v : scales) a->add_floats(v);
    s.report.set.push_back("scales as an attribute");
  } else {
    Tensor t(DType::float32, {static_cast<int64_t>(scales.size())});
    for (size_t i = 0; i < scales.size(); ++i) t.data<float>()[i] = scales[i];
    t.name = s.fresh(s.stem() + "_scales");
    onnx::TensorProto p = to_proto(t);
    n.add_input(p.name());
    s.initializers.push_back(std::move(p));
    s.report.set.push_back(fmt::format("scales as input '{}'", n.input(1)));
  }
  s.version = to;
}

namespace {

// Upsample to the target in one step: below 7 to Upsample-1; from 1 up to 7
// and on (Upsample-9 or, from opset 10 where Upsample is deprecated, Resize);
// between 7 and 9 the scales move; from 7 up to 10 and beyond it becomes Resize.
void upsample_to_target(NormSite& s) {
  const int64_t to = s.target_opset;
  if (to < 7) return upsample_1_7_down(s);
  if (s.version < 7) {
    upsample_1_7_up(s);
    if (to >= 10) resize_up(s);
    else if (to >= 9) upsample_7_9(s);
    return;
  }
  if (to < 10) return upsample_7_9(s);
  resize_up(s);
}

// Across 7 or 9, or anywhere at opset 10 and above (Upsample-10 is deprecated:
// such a node becomes Resize).
bool upsample_applies(const onnx::NodeProto&, int64_t from, int64_t to) {
  auto crosses = [&](int64_t v) { return std::min(from, to) < v && std::max(from, to) >= v; };
  return (from >= 7 && to >= 10) || (std::min(from, to) >= 7 && crosses(9)) || crosses(7);
}

}  // namespace

const Step upsample{"upsample", "upsample_7_9", upsample_to_target, upsample_to_target, upsample_applies};

}  // namespace bnorm::steps
