// Runs the steps of the table of schema changes (versions.h) on one node up
// to opset 17: which steps, in which order, and the site's version.
//
//   steps   those named on the op's rows at or below 17 whose match accepts
//           the node (Step::applies, else crossing a row naming the step)
//   order   the order of their rows in the direction of travel (a step
//           named on several rows is placed at its first)
//   version a step that leaves s.version where it was is a one-change step:
//           s.version moves past the last of its rows crossed
#include <algorithm>

#include "model/op_versions.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

constexpr int kLastOwnVersion = 17;  // the steps above are run row by row (high.cpp)

}  // namespace

std::vector<const Step*> own_steps(const onnx::NodeProto& n, int64_t from, int64_t to) {
  std::vector<const Step*> out;
  // Every row of the op up to 17, in the direction of travel.
  for (const VersionChange* c : rows_crossed(n.op_type(), to < from ? kLastOwnVersion : 0,
                                             to < from ? 0 : kLastOwnVersion)) {
    if (!c->step || std::find(out.begin(), out.end(), c->step) != out.end()) continue;
    out.push_back(c->step);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [&](const Step* st) { return !step_applies(*st, n, from, to); }),
            out.end());
  return out;
}

void run_steps(NormSite& s, int64_t from, int64_t to, const std::function<void(const Step&, int, int)>& on_step) {
  const bool up = to > from;
  for (const Step* st : own_steps(s.node, from, to)) {
    const std::string op = s.node.op_type();
    const int before = s.version;
    (up ? st->up : st->down)(s);
    if (s.version == before) {
      for (const VersionChange* c : rows_crossed(op, from, to)) {
        if (c->step == st) s.version = up ? c->version : op_version_at(op, c->version - 1);
      }
    }
    if (on_step) on_step(*st, before, s.version);
  }
}

}  // namespace bnorm::steps
