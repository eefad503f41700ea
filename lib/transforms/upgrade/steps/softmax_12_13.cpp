// Softmax, LogSoftmax and Hardmax 12 <-> 13: from "coerce to 2-D at `axis`
// (default 1), normalize each row" to "normalize along `axis` (default -1)".
//
//   axis is the last one (-1, or rank - 1 when the rank is known): the same
//   meaning; axis is written as -1 (up) or rank - 1 / -1 (down).
//
//   Otherwise, up:
//   Before (12): X -> Softmax(axis=k) -> Y
//   After  (13): X -> Flatten(axis=k) -> Softmax(axis=-1) -> Reshape(., Shape(X)) -> Y
//
// Flatten at k is exactly version 12's coercion, and Shape(X) is X's runtime
// shape, so the rewrite needs no static shape. When X's dims are all known,
// the Reshape reads them as an int64 initializer instead of Shape(X): the
// same shape, and a model that can go back below opset 5, where Reshape's
// shape is an attribute and must be a constant (ONNX 1.12's adapter does: it
// fails when X's shape is unknown, and writes unknown dims into its Reshape;
// it also takes Hardmax as unchanged, which it is not).
//
//   Otherwise, down (X's rank r known; P swaps axis k and the last axis, so
//   P is its own inverse):
//   Before (13): X -> Softmax(axis=k) -> Y
//   After  (12): X -> Transpose(P) -> Softmax(axis=r-1) -> Transpose(P) -> Y
//
// Version 12 at axis r-1 normalizes each row of the last axis, which
// Transpose(P) made axis k: the same elements, the same arithmetic (Hardmax
// takes the first maximum along the axis in both). Without X's rank there
// is no P to write: Error naming the node.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.h"
#include "transforms/upgrade/steps/step.h"
#include "model/node_label.h"
#include "model/tensor_proto.h"

namespace bnorm::steps {

namespace {

struct Plan {
  int64_t axis = 0;
  bool last = false;
  std::optional<int> rank;
};

Plan match(const NormSite& s, int64_t default_axis) {
  Plan p;
  const auto* a = find_attr(s.node, "axis");
  p.axis = a ? a->i() : default_axis;
  p.rank = s.rank_of(s.node.input(0));
  if (p.axis < 0 && p.rank) p.axis += *p.rank;
  p.last = p.axis == -1 || (p.rank && p.axis == *p.rank - 1);
  return p;
}

}  // namespace

void softmax_12_13_up(NormSite& s) {
  const Plan p = match(s, 1);
  set_int(s.node, "axis", -1);
  if (p.last) {
    s.report.set.push_back(fmt::format("axis = -1 (was {}, the last axis)", p.axis));
    return;
  }
  const std::string x = s.node.input(0), y = s.node.output(0);
  const std::string x2 = s.fresh(x + "_2d"), y2 = s.fresh(y + "_2d"), shape = s.fresh(x + "_shape");
  set_int(s.add_before("Flatten", {x}, {x2}), "axis", p.axis);
  const auto dims = s.dims_of(x);
  const bool known = dims && std::none_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0; });
  if (known) {
    std::vector<double> v(dims->begin(), dims->end());
    Tensor t = Tensor::from_f64(DType::int64, {static_cast<int64_t>(v.size())}, v);
    t.name = shape;
    s.initializers.push_back(to_proto(t));
  } else {
    s.add_before("Shape", {x}, {shape});
  }
  s.node.set_input(0, x2);
  s.node.set_output(0, y2);
  s.add_after("Reshape", {y2, shape}, {y});
  s.report.set.push_back(fmt::format("axis = -1 on X flattened at axis {}; reshaped back to {}", p.axis,
                                     known ? fmt::format("[{}]", fmt::join(*dims, ", ")) : std::string("Shape(X)")));
}

void softmax_12_13_down(NormSite& s) {
  const Plan p = match(s, -1);
  if (!p.last && !p.rank) {
    throw Error(ErrorKind::unsupported,
                fmt::format("{} over axis {} needs the rank of '{}' below opset 13 (to move the axis last with a "
                            "Transpose), and the rank is unknown",
                            s.node.op_type(), p.axis, s.node.input(0)))
        .at_node(node_label(s.node), s.node.op_type(), 13)
        .with_hint("declare the input's shape, or convert to opset 13 or later");
  }
  if (!p.last) {
    const int r = *p.rank;
    std::vector<int64_t> perm(static_cast<size_t>(r));
    for (int i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
    std::swap(perm[static_cast<size_t>(p.axis)], perm.back());
    const std::string x = s.node.input(0), y = s.node.output(0);
    const std::string xt = s.fresh(x + "_axis_last"), yt = s.fresh(y + "_axis_last");
    set_ints(s.add_before("Transpose", {x}, {xt}), "perm", perm);
    s.node.set_input(0, xt);
    s.node.set_output(0, yt);
    set_ints(s.add_after("Transpose", {yt}, {y}), "perm", perm);
    s.new_ranks[xt] = r;
    s.new_ranks[yt] = r;
    if (const auto t = s.type_of(x)) s.new_types[xt] = s.new_types[yt] = *t;
    set_int(s.node, "axis", r - 1);
    s.report.set.push_back(fmt::format("axis {} moved last by Transpose(perm = [{}]) before and after; axis = {}",
                                       p.axis, fmt::join(perm, ", "), r - 1));
    return;
  }
  if (p.rank) {
    set_int(s.node, "axis", *p.rank - 1);
  } else if (s.target_opset >= 11) {
    set_int(s.node, "axis", -1);
  } else {
    throw Error(ErrorKind::unsupported,
                fmt::format("{} over the last axis of an input of unknown rank cannot be written before opset 11",
                            s.node.op_type()))
        .at_node(node_label(s.node), s.node.op_type(), 13);
  }
  s.report.set.push_back(fmt::format("axis = {}", p.rank ? *p.rank - 1 : -1));
}

const Step softmax_12_13{"softmax_12_13", "softmax_12_13", softmax_12_13_up, softmax_12_13_down};

}  // namespace bnorm::steps
