// DFT 17 <-> 20: the axis moves from an attribute to an input, and its
// default changes.
//
//   DFT-17: DFT(input, dft_length?) axis = 1 (default) inverse onesided
//   DFT-20: DFT(input, dft_length?, axis?) inverse onesided   no axis input: -2
//
// Up: the axis (the attribute, or its default 1) becomes a scalar int64
// initializer input (written even at 1, since 20's default differs).
// Down: an axis input must be a constant scalar (Error naming the node and
// the input otherwise); absent, it is 20's default -2; either becomes the
// attribute. Formula: unchanged.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void cross(NormSite& s, bool up) {
  onnx::NodeProto& n = s.node;
  if (up) {
    const int64_t axis = attr_int(n, "axis", 1);
    remove_attr(n, "axis");
    onnx::TensorProto t;
    t.set_name(s.fresh(s.stem() + "_axis"));
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(axis);
    s.initializers.push_back(t);
    set_input(n, 2, t.name());
    s.report.set.push_back(fmt::format("axis {} as input '{}'", axis, t.name()));
    return;
  }
  int64_t axis = -2;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const auto v = constant_ints(s, 2, "axis", "become an attribute below 20");
    if (v.size() != 1) refuse(s, fmt::format("input '{}' (axis) holds {} values, not one", n.input(2), v.size()));
    axis = v[0];
  }
  drop_input(n, 2);
  set_int(n, "axis", axis);
  s.report.set.push_back(fmt::format("axis = {} as an attribute", axis));
}

}  // namespace

const Step dft_20{"dft_20", "dft_20", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
