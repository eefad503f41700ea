// Max, Min, Mean, Sum across 8: same shapes <-> numpy broadcast.
//
//   Max-6 (Min, Mean, Sum): Max(a, b, ..)  every input of the same shape
//   Max-8:                  Max(a, b, ..)  numpy (multidirectional) broadcast
//
// Up: nothing (equal shapes broadcast to themselves). Down: the inputs must
// surely have one shape (equal sizes, or the same symbolic dim names); else
// Error(unsupported) naming the node and the shapes: version 6 has no
// broadcast (ONNX 1.12's adapter writes a `broadcast` attribute Max-6 does
// not have, which its checker then refuses, and keeps Sum's shapes as they
// are). Element types must exist at the target. Formula: unchanged.
#include <fmt/format.h>

#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void variadic_8_convert(NormSite& s) {
  const int to = schema_version(s.node.op_type(), s.target_opset);
  if (s.version >= 8 && to < 8) {
    refuse_missing_types(s, to);
    if (!inputs_same_shape(s)) {
      std::vector<std::string> shapes;
      for (const auto& in : s.node.input()) {
        const auto d = s.dims_of(in);
        if (!d) {
          shapes.push_back("unknown");
          continue;
        }
        std::vector<std::string> parts;
        for (int64_t x : *d) parts.push_back(x < 0 ? "?" : std::to_string(x));
        shapes.push_back(fmt::format("[{}]", fmt::join(parts, ", ")));
      }
      refuse(s, fmt::format("inputs of shapes {}: below version 8 every input must have the same shape (no broadcast)",
                            fmt::join(shapes, ", ")));
    }
  }
  s.version = to;
}

const Step variadic_8{"variadic_8", "variadic_8", variadic_8_convert, variadic_8_convert};

}  // namespace bnorm::steps
