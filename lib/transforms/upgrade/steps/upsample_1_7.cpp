// Upsample 7/8/9 <-> 1 (experimental), across opset 7: ONNX 1.12 has no
// adapter going down, and its Upsample_6_7 going up keeps mode "bilinear",
// which Upsample-7 does not have.
//
//   Upsample-7/8: Upsample(X) scales = [1, 1, sh, sw] mode nearest | linear   (floats attribute)
//   Upsample-9:   Upsample(X, scales)                                         (float input [4])
//   Upsample-1:   Upsample(X) height_scale = sh, width_scale = sw, mode nearest | bilinear
//
// Up: scales = [1, 1, height_scale, width_scale] as the attribute (then on
// to 9 or Resize by upsample_7_9 / resize_up), bilinear -> linear.
// Preconditions going down (each an Error naming the node): the scales are a constant
// of 4 values whose first two are 1 (Upsample-1 takes a 4-D X and scales
// only its height and width); mode nearest, both ways: Upsample-1's
// "bilinear" has no exact definition (its schema gives none; Caffe2, where
// the op came from, aligns corners, Upsample-7's "linear" does not), so
// linear and bilinear are refused. Formula: unchanged (nearest floors x / scale).
#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

void upsample_1_7_down(NormSite& s) {
  onnx::NodeProto& n = s.node;
  std::vector<double> scales;
  if (s.version < 9) {
    const auto* a = find_attr(n, "scales");
    if (!a) refuse(s, "attribute 'scales' is missing");
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    const auto t = constant_input(s, 1);
    if (!t) {
      refuse(s, fmt::format("input '{}' (scales) is not a constant (initializer or Constant), so it cannot become "
                            "Upsample-1's height_scale and width_scale",
                            n.input_size() > 1 ? n.input(1) : ""));
    }
    scales = t->to_f64();
  }
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1) {
    refuse(s, fmt::format("scales [{}]: Upsample-1 (below opset 7) scales only the last two dims of a 4-D input",
                          fmt::join(scales, ", ")));
  }
  const auto* m = find_attr(n, "mode");
  const std::string mode = m ? m->s() : "nearest";
  if (mode != "nearest") {
    refuse(s, fmt::format("mode '{}': Upsample-1's bilinear has no exact definition (docs/semantics.md), so only "
                          "nearest crosses opset 7", mode));
  }
  remove_attr(n, "scales");
  remove_attr(n, "mode");
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  for (const auto& [name, v] : {std::pair<const char*, double>{"height_scale", scales[2]}, {"width_scale", scales[3]}}) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(v));
  }
  auto* a = n.add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("nearest");
  s.report.set.push_back(fmt::format("height_scale {}, width_scale {}, mode {}", scales[2], scales[3], a->s()));
  s.version = 1;
}

void upsample_1_7_up(NormSite& s) {
  onnx::NodeProto& n = s.node;
  const auto* h = find_attr(n, "height_scale");
  const auto* w = find_attr(n, "width_scale");
  if (!h || !w) refuse(s, "attributes 'height_scale' and 'width_scale' are required by Upsample-1");
  const float sh = h->f(), sw = w->f();
  const auto* m = find_attr(n, "mode");
  const std::string mode = m ? m->s() : "nearest";
  if (mode != "nearest") {
    refuse(s, fmt::format("mode '{}': Upsample-1's bilinear has no exact definition (docs/semantics.md), so only "
                          "nearest crosses opset 7", mode));
  }
  remove_attr(n, "height_scale");
  remove_attr(n, "width_scale");
  remove_attr(n, "mode");
  auto* a = n.add_attribute();
  a->set_name("scales");
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : {1.0f, 1.0f, sh, sw}) a->add_floats(v);
  auto* md = n.add_attribute();
  md->set_name("mode");
  md->set_type(onnx::AttributeProto::STRING);
  md->set_s("nearest");
  s.report.set.push_back(fmt::format("scales [1, 1, {}, {}], mode {}", sh, sw, md->s()));
  s.version = 7;
}

}  // namespace bnorm::steps
