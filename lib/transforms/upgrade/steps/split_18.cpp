// Split 13 <-> 18: num_outputs.
//
//   Split-13: Split(X, split?) axis              no split: equal parts, one per output
//   Split-18: Split(X, split?) axis num_outputs  exactly one of split and num_outputs;
//             num_outputs parts of ceil(d / n), the last one smaller
//
// Up: without a split input, num_outputs = the number of outputs (equal
// parts at 13 need d divisible by it, where both versions agree).
// Down: num_outputs is dropped; when d is known and not divisible, the
// sizes 18 means (ceil(d / n) each, the remainder last) are written as a
// split initializer; when d is unknown the equal split stays (a runtime
// refuses an indivisible d at 13, so no number is ever wrong).
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void cross(NormSite& s, bool up) {
  onnx::NodeProto& n = s.node;
  const bool has_split = n.input_size() > 1 && !n.input(1).empty();
  if (up) {
    if (!has_split) {
      set_int(n, "num_outputs", n.output_size());
      s.report.set.push_back(fmt::format("num_outputs = {}", n.output_size()));
    }
    return;
  }
  const int64_t parts = attr_int(n, "num_outputs", 0);
  remove_attr(n, "num_outputs");
  if (has_split || parts <= 0) return;
  const auto dims = s.dims_of(n.input(0));
  if (!dims) return;
  int64_t axis = attr_int(n, "axis", 0);
  const int64_t rank = static_cast<int64_t>(dims->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || (*dims)[axis] < 0 || (*dims)[axis] % parts == 0) return;
  const int64_t d = (*dims)[axis], chunk = (d + parts - 1) / parts;
  std::vector<int64_t> sizes(parts, chunk);
  sizes.back() = d - chunk * (parts - 1);
  if (sizes.back() < 0) refuse(s, fmt::format("{} parts of a dimension of {} leave a negative last part", parts, d));
  set_input(n, 1, s.add_int64s(s.stem() + "_split", sizes));
  s.report.set.push_back(fmt::format("split sizes as input '{}'", n.input(1)));
}

}  // namespace

const Step split_18{"split_18", "split_18", [](NormSite& s) { cross(s, true); }, [](NormSite& s) { cross(s, false); }};

}  // namespace bnorm::steps
