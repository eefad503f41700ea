// What the lowerings share (steps/lower_*.cpp). A lowering replaces a node
// whose op does not exist at the target opset by the op's function body
// (ONNX 1.23's Operators.md), written in the forms of the model's current
// opset, `opset` below (ReduceMean's axes an input from 18, an attribute
// before); the rest of the conversion then moves those nodes down like any
// other. Every node goes to the site's `before`; the node itself is dropped
// (transforms/upgrade/lower_pass.cpp). Values are named "<node>_<what>", fresh; the node's
// outputs keep their names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

struct Lowering {
  NormSite& s;
  int64_t opset;  // the model's opset: the forms the nodes are written in

  // A fresh value name "<node>_<what>".
  std::string value(const std::string& what);
  // op(in) -> out; `out` empty: a fresh "<node>_<what>". Returns the output.
  std::string add(const std::string& op, std::vector<std::string> in, const std::string& what,
                  const std::string& out = "");
  // A scalar initializer of type `t`.
  std::string scalar(DType t, double v, const std::string& what);
  // Cast(in) to `to`; `in` itself when `from` is already `to` and `out` is empty.
  std::string cast(const std::string& in, DType from, DType to, const std::string& what, const std::string& out = "");
  // ReduceMean over `axes` (keepdims 1; none: every axis).
  std::string reduce_mean(const std::string& in, const std::vector<int64_t>& axes, const std::string& what,
                          const std::string& out = "");
  // Reshape(in, shape) with a constant shape.
  std::string reshape(const std::string& in, const std::vector<int64_t>& shape, const std::string& what);
  // The node's input `index` with dims `shape` (one -1 allowed): a constant
  // as a reshaped initializer, anything else through a Reshape.
  std::string reshaped_input(int index, const std::vector<int64_t>& shape, const std::string& what);
};

// The element type of the node's input or output `value`; Error naming the
// node when shape inference does not know it.
DType known_type(const NormSite& s, const std::string& value, const std::string& what);
// The floating type `stash_type` names (default 1, float); Error otherwise.
DType stash_type(const NormSite& s);
// `axis` (negative: from the back) to ReduceMean's axes [axis, rank):
// non-negative when X's rank is known; negative ones (from opset 11) when
// it is not, the axis is negative and the target is 11 or above; Error
// naming the node otherwise.
std::vector<int64_t> trailing_axes(const NormSite& s, int64_t axis);
// Axes as ReduceMean takes them at the target: negative ones made
// non-negative with X's rank (Error when it is needed and unknown).
std::vector<int64_t> axes_at_target(const NormSite& s, std::vector<int64_t> axes);
// Error naming the node unless the target has the multidirectional
// broadcasting every lowering relies on (opset 7), or has `op` (Erf: 9).
void require_broadcasting(const NormSite& s);
void require_op(const NormSite& s, const std::string& op, int64_t first_opset);
// The distinct ops of the site's `before`, in order: "ReduceMean, Sub, ...".
std::string lowered_ops(const NormSite& s);

}  // namespace bnorm::steps
