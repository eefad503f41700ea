// GridSample 16 <-> 20: the interpolation modes' names, and N-D.
//
//   GridSample-16: X [N, C, H, W], mode bilinear (default) | nearest | bicubic
//   GridSample-20: X [N, C, D1..Dr], mode linear (default) | nearest | cubic
//
// Up: bilinear -> linear, bicubic -> cubic (same interpolation); absent
// stays absent (both defaults are the linear one).
// Down: linear -> bilinear, cubic -> bicubic; X must be 4-D (Error naming
// the node when its rank is another; an unknown rank is taken as 4-D, what
// a model at 16 could only mean). Formula: unchanged.
#include <fmt/format.h>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void cross(NormSite& s, bool up) {
  onnx::NodeProto& n = s.node;
  if (!up) {
    const auto rank = s.rank_of(n.input(0));
    if (rank && *rank != 4) refuse(s, fmt::format("input '{}' has rank {}; GridSample below 20 samples 4-D inputs only",
                                                   n.input(0), *rank));
  }
  for (auto& a : *n.mutable_attribute()) {
    if (a.name() != "mode") continue;
    const std::string from = a.s();
    if (up && from == "bilinear") a.set_s("linear");
    else if (up && from == "bicubic") a.set_s("cubic");
    else if (!up && from == "linear") a.set_s("bilinear");
    else if (!up && from == "cubic") a.set_s("bicubic");
    if (a.s() != from) s.report.set.push_back(fmt::format("mode '{}' as '{}'", from, a.s()));
  }
}

}  // namespace

const Step gridsample_20{"gridsample_20", "gridsample_20", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
