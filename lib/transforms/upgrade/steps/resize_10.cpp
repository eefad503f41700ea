// Resize 13 -> 11/12: absent roi and scales become empty inputs (required
// there). Resize 11/13 -> 10, and on to Upsample 9/7, where the result is
// the same:
//
//   Resize-11/13: Resize(X, roi?, scales?, sizes?) mode coordinate_transformation_mode
//                 nearest_mode cubic_coeff_a exclude_outside extrapolation_value
//   Resize-10:    Resize(X, scales) mode          coordinates asymmetric (x / scale),
//                 nearest reads floor(x / scale) for scales >= 1, ceil below (what
//                 onnxruntime and bnorm's evaluator do: the spec says nothing)
//   Upsample-9:   Upsample(X, scales) mode        as Resize-10, scales >= 1
//   Upsample-7:   Upsample(X) scales mode         the scales as an attribute
//
// Down from 11+: mode nearest or linear (cubic: refused);
// coordinate_transformation_mode asymmetric (any other: refused, naming
// it); nearest needs nearest_mode floor on axes scaled up and ceil on axes
// scaled down (1: either). scales must be a constant; sizes (with X's dims
// known) become scales when floor(in * scale) gives the sizes back in
// float. Resize-10 itself going below 10 keeps its scales (a constant).
// Below 10 the op becomes Upsample (scales >= 1); below 9 the scales
// an attribute; below 7 Upsample-1 (scales [1, 1, h, w] only,
// upsample_1_7.cpp). ONNX 1.12 has no adapter for any of these
// going down; going up its adapters convert (Upsample 7 -> 9 -> Resize 10 -> 11),
// and Resize-11/12's tf_half_pixel_for_nn, gone at 13, becomes half_pixel
// with the nearest_mode that reads the same samples (tf_half_pixel_up).
#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

std::string str_attr(const onnx::NodeProto& n, const std::string& name, const std::string& otherwise) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : otherwise;
}

std::vector<float> resize_scales(NormSite& s) {
  const onnx::NodeProto& n = s.node;
  const int k = s.version == 10 ? 1 : 2;  // Resize-10: (X, scales)
  if (n.input_size() > k && !n.input(k).empty()) {
    const auto t = constant_input(s, k);
    if (!t) refuse(s, fmt::format("input '{}' (scales) is not a constant, so it cannot be Resize-10's scales", n.input(k)));
    if (t->numel() > 0) {
      std::vector<float> out;
      for (double v : t->to_f64()) out.push_back(static_cast<float>(v));
      return out;
    }
  }
  if (n.input_size() < 4 || n.input(3).empty()) refuse(s, "neither scales nor sizes is given");
  const auto sizes = constant_ints(s, 3, "sizes", "become Resize-10's scales");
  const auto dims = s.dims_of(n.input(0));
  if (!dims || dims->size() != sizes.size()) refuse(s, "X's shape is unknown: sizes cannot become scales");
  std::vector<float> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t in = (*dims)[i];
    if (in <= 0) refuse(s, "X's shape is unknown: sizes cannot become scales");
    const float sc = static_cast<float>(static_cast<double>(sizes[i]) / static_cast<double>(in));
    if (static_cast<int64_t>(std::floor(static_cast<double>(in) * sc)) != sizes[i]) {
      refuse(s, fmt::format("size {} of axis {} is not floor({} * a float scale)", sizes[i], i, in));
    }
    out.push_back(sc);
  }
  return out;
}

void check_same_meaning(NormSite& s, const std::vector<float>& scales) {
  const onnx::NodeProto& n = s.node;
  const std::string mode = str_attr(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear") refuse(s, fmt::format("mode '{}' has no form below version 11", mode));
  const std::string ct = str_attr(n, "coordinate_transformation_mode", "half_pixel");
  if (ct != "asymmetric") {
    refuse(s, fmt::format("coordinate_transformation_mode '{}': below version 11 coordinates are asymmetric only", ct));
  }
  if (mode != "nearest") return;
  const std::string nm = str_attr(n, "nearest_mode", "round_prefer_floor");
  for (float sc : scales) {
    if (sc == 1.0f) continue;
    const char* need = sc > 1.0f ? "floor" : "ceil";
    if (nm != need) {
      refuse(s, fmt::format("nearest_mode '{}' with a scale of {}: below version 11 nearest reads {} there", nm, sc, need));
    }
  }
}

}  // namespace

void resize_convert(NormSite& s) {
  int64_t opset = s.target_opset;
  if (opset >= 11) {  // 13 -> 11/12: roi and scales are required inputs there; absent ones become empty tensors
    onnx::NodeProto& n = s.node;
    for (int i : {1, 2}) {
      if (i < n.input_size() && !n.input(i).empty()) continue;
      Tensor t(DType::float32, {0});
      t.name = s.fresh(s.stem() + (i == 1 ? "_roi" : "_scales"));
      s.initializers.push_back(to_proto(t));
      set_input(n, i, t.name);
      s.report.set.push_back(fmt::format("empty {} input '{}'", i == 1 ? "roi" : "scales", t.name));
    }
    s.version = schema_version("Resize", opset);
    return;
  }
  // Below 7, Upsample-7's form first, then Upsample-1's (upsample_1_7.cpp).
  const bool below_7 = opset < 7;
  if (below_7) opset = 7;
  const std::vector<float> scales = resize_scales(s);
  if (s.version >= 11) check_same_meaning(s, scales);
  onnx::NodeProto& n = s.node;
  const std::string mode = str_attr(n, "mode", "nearest");
  for (const char* a : {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                        "extrapolation_value", "mode"}) {
    remove_attr(n, a);
  }
  auto* m = n.add_attribute();
  m->set_name("mode");
  m->set_type(onnx::AttributeProto::STRING);
  m->set_s(mode);
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  if (opset < 10) {
    for (float sc : scales)
      if (sc < 1.0f) refuse(s, fmt::format("a scale of {}: Upsample only scales up", sc));
    n.set_op_type("Upsample");
    s.report.set.push_back("op Upsample");
  }
  if (opset < 9) {
    auto* a = n.add_attribute();
    a->set_name("scales");
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float sc : scales) a->add_floats(sc);
    s.report.set.push_back("scales as an attribute");
  } else {
    Tensor t = Tensor::from_f64(DType::float32, {static_cast<int64_t>(scales.size())},
                                std::vector<double>(scales.begin(), scales.end()));
    t.name = s.fresh(s.stem() + "_scales");
    s.initializers.push_back(to_proto(t));
    n.add_input(t.name);
    s.report.set.push_back(fmt::format("scales as input '{}'", t.name));
  }
  s.version = schema_version(n.op_type(), opset);
  if (below_7) upsample_1_7_down(s);
}

namespace {

// Resize-11/12 with tf_half_pixel_for_nn (x_original = (x + 0.5) / scale),
// gone at 13, going up: with v = (x + 0.5) / scale and half_pixel's
// u = v - 0.5, floor(v) = floor(u + 0.5) is nearest_mode round_prefer_ceil
// on u, and round_prefer_floor(v) = ceil(v - 0.5) = ceil(u) is ceil: the
// same samples (v - 0.5 is exact in float and double below 2^23). Nothing
// of 13 reads ceil(v) or round_prefer_ceil(v) samples, nor linear or cubic
// taps at v: refused, naming the node.
void tf_half_pixel_up(NormSite& s) {
  onnx::NodeProto& n = s.node;
  const std::string mode = str_attr(n, "mode", "nearest");
  const std::string nearest = str_attr(n, "nearest_mode", "round_prefer_floor");
  std::string now;
  if (mode == "nearest" && nearest == "floor") now = "round_prefer_ceil";
  if (mode == "nearest" && nearest == "round_prefer_floor") now = "ceil";
  if (now.empty()) {
    refuse(s, fmt::format("coordinate_transformation_mode tf_half_pixel_for_nn with mode {}{} has no equivalent from "
                          "Resize-13 on (half_pixel reads those samples with nearest_mode floor or round_prefer_floor "
                          "only)",
                          mode, mode == "nearest" ? " and nearest_mode " + nearest : ""));
  }
  for (const auto& [name, value] : {std::pair<const char*, std::string>{"coordinate_transformation_mode", "half_pixel"},
                                    {"nearest_mode", now}}) {
    remove_attr(n, name);
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  s.report.set.push_back(fmt::format("coordinate_transformation_mode half_pixel with nearest_mode {} (was "
                                     "tf_half_pixel_for_nn with {}: the same samples)", now, nearest));
}

}  // namespace

// Up from Upsample-7/9 or Resize-10 to Resize 10+. ONNX 1.12's Resize
// 10 -> 11 adapter leaves coordinate_transformation_mode at 11's default
// half_pixel, which moves every sample (wrong numbers for linear and for
// most nearest scales): here it is asymmetric, with nearest_mode floor
// (scales >= 1) or ceil (scales below 1), what 10 computes. A nearest
// Resize scaling some axes up and others down, or with non-constant
// scales, has no single nearest_mode: refused, naming the node.
void resize_up(NormSite& s) {
  const int to = schema_version("Resize", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version >= 11) {  // Resize-11/12 across 13: tf_half_pixel_for_nn only (resize_10_applies)
    tf_half_pixel_up(s);
    s.version = to;
    return;
  }
  std::vector<float> scales;
  std::string scales_name;
  if (const auto* a = find_attr(n, "scales")) {  // Upsample-7
    scales.assign(a->floats().begin(), a->floats().end());
  } else if (n.input_size() > 1 && !n.input(1).empty()) {
    scales_name = n.input(1);
    if (const auto t = constant_input(s, 1)) {
      for (double v : t->to_f64()) scales.push_back(static_cast<float>(v));
    }
  }
  const std::string mode = str_attr(n, "mode", "nearest");
  remove_attr(n, "scales");
  if (scales_name.empty()) {
    Tensor t = Tensor::from_f64(DType::float32, {static_cast<int64_t>(scales.size())},
                                std::vector<double>(scales.begin(), scales.end()));
    t.name = scales_name = s.fresh(s.stem() + "_scales");
    s.initializers.push_back(to_proto(t));
  }
  n.set_op_type("Resize");
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  if (to < 11) {
    n.add_input(scales_name);
    s.report.set.push_back("op Resize");
    s.version = to;
    return;
  }
  bool up = false, down = false;
  for (float sc : scales) {
    up = up || sc > 1.0f;
    down = down || sc < 1.0f;
  }
  if (mode == "nearest" && (scales.empty() || (up && down))) {
    refuse(s, scales.empty() ? "its scales are not a constant: the nearest_mode that keeps its numbers at 11 is unknown"
                             : "it scales some axes up and others down: no one nearest_mode keeps its numbers at 11");
  }
  Tensor roi(DType::float32, {0});
  roi.name = s.fresh(s.stem() + "_roi");
  s.initializers.push_back(to_proto(roi));
  n.add_input(roi.name);
  n.add_input(scales_name);
  auto set_str = [&](const char* name, const std::string& v) {
    remove_attr(n, name);
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  };
  set_str("coordinate_transformation_mode", "asymmetric");
  if (mode == "nearest") set_str("nearest_mode", down ? "ceil" : "floor");
  s.report.set.push_back("coordinate_transformation_mode = asymmetric (10's coordinates)");
  s.version = to;
}

namespace {

// Down: across 10 (it becomes Upsample), 11 or 13; up: across 11, or across
// 13 with tf_half_pixel_for_nn (else ONNX's adapter moves Resize 11 -> 13).
bool resize_10_applies(const onnx::NodeProto& n, int64_t from, int64_t to) {
  auto crosses = [&](int64_t v) { return std::min(from, to) < v && std::max(from, to) >= v; };
  if (to < from) return crosses(10) || crosses(11) || crosses(13);
  return crosses(11) || (crosses(13) && str_attr(n, "coordinate_transformation_mode", "") == "tf_half_pixel_for_nn");
}

}  // namespace

const Step resize_10{"resize_10", "resize_10", resize_up, resize_convert, resize_10_applies};

}  // namespace bnorm::steps
