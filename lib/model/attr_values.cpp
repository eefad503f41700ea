#include "model/attr_values.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bnorm {

namespace {

struct Entry {
  const char* op;
  const char* attr;
  int since;  // holds from this schema version up to the attribute's next entry
  std::vector<std::string> values;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"GridSample", "mode", 16, {"bilinear", "nearest", "bicubic"}},
      {"GridSample", "mode", 20, {"linear", "nearest", "cubic"}},
      {"GridSample", "padding_mode", 16, {"zeros", "border", "reflection"}},
      {"Pad", "mode", 1, {"constant", "reflect", "edge"}},
      {"Pad", "mode", 19, {"constant", "reflect", "edge", "wrap"}},
      {"Resize", "mode", 10, {"nearest", "linear"}},
      {"Resize", "mode", 11, {"nearest", "linear", "cubic"}},
      {"Resize", "coordinate_transformation_mode", 11,
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}},
      {"Resize", "coordinate_transformation_mode", 13,
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"}},
      {"Resize", "coordinate_transformation_mode", 19,
       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"}},
      {"Resize", "nearest_mode", 11, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}},
      {"Resize", "keep_aspect_ratio_policy", 18, {"stretch", "not_larger", "not_smaller"}},
      {"ScatterElements", "reduction", 16, {"none", "add", "mul"}},
      {"ScatterElements", "reduction", 18, {"none", "add", "mul", "max", "min"}},
      {"ScatterND", "reduction", 16, {"none", "add", "mul"}},
      {"ScatterND", "reduction", 18, {"none", "add", "mul", "max", "min"}},
      {"Upsample", "mode", 1, {"nearest", "bilinear"}},
      {"Upsample", "mode", 7, {"nearest", "linear"}},
  };
  return t;
}

}  // namespace

const std::vector<std::string>* allowed_attr_values(std::string_view op, std::string_view attr, int version) {
  const Entry* found = nullptr;
  for (const auto& e : table()) {
    if (op == e.op && attr == e.attr && e.since <= version && (!found || e.since > found->since)) found = &e;
  }
  return found ? &found->values : nullptr;
}

std::string attr_value_problem(const onnx::NodeProto& n, int version) {
  for (const auto& a : n.attribute()) {
    if (a.type() != onnx::AttributeProto::STRING) continue;
    const auto* allowed = allowed_attr_values(n.op_type(), a.name(), version);
    if (!allowed) continue;
    bool ok = false;
    for (const auto& v : *allowed) ok = ok || v == a.s();
    if (!ok) {
      return fmt::format("'{}' is not a {} of {}-{} (it is one of {})", a.s(), a.name(), n.op_type(), version,
                         fmt::join(*allowed, ", "));
    }
  }
  return "";
}

}  // namespace bnorm
