// Pad 13 <-> 18: the axes input.
//
//   Pad-13: Pad(data, pads, constant_value?) mode         pads: [2 * rank]
//   Pad-18: Pad(data, pads, constant_value?, axes?) mode  pads: [2 * len(axes)] over those axes
//
// Up: nothing (no axes: every axis, as before).
// Down: an axes input must be a constant, and so must pads (Error naming
// the node and the input otherwise); the data's rank must be known. pads is
// expanded to every axis (0 for the others) as a new initializer, axes dropped.
#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void cross(NormSite& s, bool up) {
  onnx::NodeProto& n = s.node;
  if (up || n.input_size() < 4 || n.input(3).empty()) return;
  const std::vector<int64_t> axes = constant_ints(s, 3, "axes", "be left out below 18");
  const std::vector<int64_t> pads = constant_ints(s, 1, "pads", "be expanded to every axis below 18");
  const auto rank = s.rank_of(n.input(0));
  if (!rank) refuse(s, fmt::format("the rank of input '{}' is unknown: pads cannot be expanded to every axis", n.input(0)));
  const size_t k = axes.size();
  if (pads.size() != 2 * k) refuse(s, fmt::format("pads has {} values for {} axes", pads.size(), k));
  std::vector<int64_t> full(2 * static_cast<size_t>(*rank), 0);
  for (size_t i = 0; i < k; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + *rank : axes[i];
    if (a < 0 || a >= *rank) refuse(s, fmt::format("axis {} is out of range for rank {}", axes[i], *rank));
    full[a] = pads[i];
    full[a + *rank] = pads[i + k];
  }
  n.set_input(1, s.add_int64s(s.stem() + "_pads", full));
  drop_input(n, 3);
  s.report.set.push_back(fmt::format("pads over every axis as input '{}'", n.input(1)));
}

}  // namespace

const Step pad_18{"pad_18", "pad_18", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
