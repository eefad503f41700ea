// Rules of the reductions: Reduce* (axes attribute, an input from 13 for
// ReduceSum and from 18 for the others; keepdims; noop_with_empty_axes),
// ArgMax and ArgMin (axis, keepdims; int64).
#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

void reduce(NodeCtx& c, int input_from) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  const bool keep = attr_int(c.node, "keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (c.version < input_from) {
    axes = attr_ints(c.node, "axes");
  } else if (c.has_input(1)) {
    axes = c.ints(1);
    if (!axes) {
      // Axes not known: keepdims keeps the rank, else the rank is unknown.
      c.set(0, c.elem(0), keep ? std::optional(std::vector<InferredDim>(s->size())) : std::nullopt);
      return;
    }
  }
  const int64_t rank = static_cast<int64_t>(s->size());
  std::vector<bool> reduced(s->size(), false);
  if (!axes || axes->empty()) {
    if (c.version >= input_from && attr_int(c.node, "noop_with_empty_axes", 0) != 0) {
      c.set(0, c.elem(0), *s);
      return;
    }
    reduced.assign(s->size(), true);
  } else {
    for (int64_t a : *axes) {
      const int64_t k = norm_axis(a, rank);
      if (k < 0) return;
      reduced[static_cast<size_t>(k)] = true;
    }
  }
  std::vector<InferredDim> d;
  for (size_t i = 0; i < s->size(); ++i) {
    if (!reduced[i]) d.push_back((*s)[i]);
    else if (keep) d.push_back(InferredDim::of(1));
  }
  c.set(0, c.elem(0), d);
}

void arg(NodeCtx& c) {
  const auto* s = c.shape(0);
  if (!s) {
    c.set(0, onnx::TensorProto::INT64, std::nullopt);
    return;
  }
  const int64_t axis = norm_axis(attr_int(c.node, "axis", 0), static_cast<int64_t>(s->size()));
  if (axis < 0) return;
  std::vector<InferredDim> d = *s;
  if (attr_int(c.node, "keepdims", 1) != 0) d[static_cast<size_t>(axis)] = InferredDim::of(1);
  else d.erase(d.begin() + axis);
  c.set(0, onnx::TensorProto::INT64, d);
}

}  // namespace

void add_reduce_rules(RuleTable& t) {
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare"})
    t[op] = [](NodeCtx& c) { reduce(c, 18); };
  t["ReduceSum"] = [](NodeCtx& c) { reduce(c, 13); };
  t["ArgMax"] = t["ArgMin"] = arg;
}

}  // namespace bnorm::shape_infer
