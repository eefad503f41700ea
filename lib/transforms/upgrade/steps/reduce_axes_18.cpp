// Reduce* 13 <-> 18 (ReduceL1, L2, LogSum, LogSumExp, Max, Mean, Min, Prod,
// SumSquare; ReduceSum made the same move at 13, converted by ONNX's
// adapter): the axes move from an attribute to an input.
//
//   Reduce-13: Reduce(data) axes = [..]? keepdims      no axes: every axis
//   Reduce-18: Reduce(data, axes?) keepdims noop_with_empty_axes
//              no or empty axes: every axis, or none (identity) when noop_with_empty_axes = 1
//
// Up: an `axes` attribute becomes an int64 initializer input; none stays
// none (noop_with_empty_axes left at 0: every axis, as before).
// Down: an `axes` input must be a constant (Error naming the node and the
// input otherwise) and becomes the attribute; noop_with_empty_axes = 1 with
// no or empty axes has no form below 18 (refused); otherwise it is dropped.
// Formula: unchanged.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void cross(NormSite& s, bool up) {
  onnx::NodeProto& n = s.node;
  if (up) {
    const auto* a = find_attr(n, "axes");
    if (a && a->ints_size() > 0) {
      const std::vector<int64_t> axes(a->ints().begin(), a->ints().end());
      set_input(n, 1, s.add_int64s(s.stem() + "_axes", axes));
      s.report.set.push_back(fmt::format("axes as input '{}'", n.input(1)));
    }
    remove_attr(n, "axes");
    return;
  }
  std::vector<int64_t> axes;
  if (n.input_size() > 1 && !n.input(1).empty()) axes = constant_ints(s, 1, "axes", "become an attribute below 18");
  if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) {
    refuse(s, "noop_with_empty_axes = 1 with no axes leaves the data unreduced, which has no form below version 18 "
              "(no axes means every axis there)");
  }
  remove_attr(n, "noop_with_empty_axes");
  drop_input(n, 1);
  if (!axes.empty()) {
    set_ints(n, "axes", axes);
    s.report.set.push_back("axes as an attribute");
  }
}

}  // namespace

const Step reduce_axes_18{"reduce_axes_18", "reduce_axes_18", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
