// LpPool and GlobalLpPool across 2: the norm `p` from a float to an int
// (ONNX 1.12 has no adapter either way: "No Adapter For GlobalLpPool").
//
//   LpPool-1:  p float (default 2.0)      LpPool-2+: p int (default 2)
//
// Up: p must be a whole number (else Error naming the node); written as an
// int. LpPool-1 without kernel_shape (optional there, with no default;
// required from 2) is refused, naming the node. Down: written as a float (exact for every int up to 2^24). Absent
// stays absent (the defaults agree). Formula: unchanged.
#include <fmt/format.h>

#include <cmath>

#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void lppool_2_convert(NormSite& s) {
  const int to = schema_version(s.node.op_type(), s.target_opset);
  onnx::NodeProto& n = s.node;
  if (n.op_type() == "LpPool" && s.version < 2 && to >= 2 && !find_attr(n, "kernel_shape")) {
    refuse(s, "it has no kernel_shape: LpPool-1 gives it no default, and from version 2 it is required");
  }
  const auto* p = find_attr(n, "p");
  if (p && s.version < 2 && to >= 2) {
    const float v = p->f();
    if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 1e9f) {
      refuse(s, fmt::format("p = {} is not a whole number; from version 2 p is an int", v));
    }
    set_int(n, "p", static_cast<int64_t>(v));
    s.report.set.push_back(fmt::format("p = {} as an int", static_cast<int64_t>(v)));
  } else if (p && s.version >= 2 && to < 2) {
    const int64_t v = p->i();
    remove_attr(n, "p");
    auto* a = n.add_attribute();
    a->set_name("p");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(v));
    s.report.set.push_back(fmt::format("p = {} as a float", v));
  }
  s.version = to;
}

const Step lppool_2{"lppool_2", "lppool_2", lppool_2_convert, lppool_2_convert};

}  // namespace bnorm::steps
