// Attributes <-> inputs up to opset 17, in both directions, for the ops
// whose ONNX 1.12 adapters are missing going down ("No Adapter To Version
// $10 for Clip") or ignore negative axes:
//
//   Clip-6:      Clip(X) min max (floats; absent: no bound)
//   Clip-11:     Clip(X, min?, max?)                 scalars of X's type
//   Slice-1:     Slice(X) starts ends axes?          (steps: always 1)
//   Slice-10:    Slice(X, starts, ends, axes?, steps?)  int32/int64 1-D
//   TopK-1:      TopK(X) k axis                      largest, sorted
//   TopK-10:     TopK(X, K) axis                     K: int64 [1]
//   TopK-11:     TopK(X, K) axis largest sorted      (defaults 1, 1)
//   Squeeze/Unsqueeze-1: axes attribute, non-negative
//   Squeeze/Unsqueeze-11: axes attribute, negative allowed
//   Squeeze/Unsqueeze-13: axes input (int64 1-D)
//
// Each function moves the node from its version to the one of the target
// opset in one step. Up: attributes become initializer inputs (Clip's
// bounds of X's type: Error naming the node when X's type is unknown).
// Down: the inputs must be constants (Error naming the node and the input
// otherwise) and become attributes; Slice's steps must all be 1; TopK's
// largest and sorted must be 1 below 11; negative axes below 11 are
// normalized with the rank (Error naming the node when it is unknown).
// Formula: unchanged.
#include <fmt/format.h>

#include <optional>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {


std::optional<std::vector<int64_t>> ints_input(NormSite& s, int i, const char* what, int below) {
  if (i >= s.node.input_size() || s.node.input(i).empty()) return std::nullopt;
  return constant_ints(s, i, what, fmt::format("become an attribute below version {}", below));
}

void scalar_input(NormSite& s, int i, double v, const char* what) {
  const auto type = s.type_of(s.node.input(0));
  if (!type) refuse(s, fmt::format("the {} bound becomes an input of X's type, and X's type is unknown", what));
  Tensor t = Tensor::from_f64(*type, {}, {v});
  t.name = s.fresh(s.stem() + "_" + what);
  onnx::TensorProto p = to_proto(t);
  set_input(s.node, i, p.name());
  s.initializers.push_back(std::move(p));
  s.report.set.push_back(fmt::format("{} as input '{}'", what, s.node.input(i)));
}

// Negative axes below 11: made non-negative with the rank `rank` (of the
// output for Unsqueeze).
void normalize_axes(NormSite& s, std::vector<int64_t>& axes, std::optional<int> rank) {
  for (auto& a : axes) {
    if (a >= 0) continue;
    if (!rank) refuse(s, fmt::format("axis {} is negative, which versions below 11 do not allow, and the rank is unknown", a));
    a += *rank;
  }
}

}  // namespace

void clip_convert(NormSite& s) {
  const int to = schema_version("Clip", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version < 11 && to >= 11) {
    const auto* lo = find_attr(n, "min");
    const auto* hi = find_attr(n, "max");
    const std::optional<double> min = lo ? std::optional<double>(lo->f()) : std::nullopt;
    const std::optional<double> max = hi ? std::optional<double>(hi->f()) : std::nullopt;
    remove_attr(n, "min");
    remove_attr(n, "max");
    if (min) scalar_input(s, 1, *min, "min");
    if (max) scalar_input(s, 2, *max, "max");
  } else if (s.version >= 11 && to < 11) {
    for (int i : {1, 2}) {
      const auto t = i < n.input_size() && !n.input(i).empty() ? constant_input(s, i) : std::nullopt;
      if (i < n.input_size() && !n.input(i).empty() && !t) constant_ints(s, i, i == 1 ? "min" : "max", "become an attribute below version 11");
      if (!t) continue;
      if (t->numel() != 1) refuse(s, fmt::format("input '{}' holds {} values, not one", n.input(i), t->numel()));
      auto* a = n.add_attribute();
      a->set_name(i == 1 ? "min" : "max");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(static_cast<float>(t->to_f64()[0]));
      s.report.set.push_back(fmt::format("{} as an attribute", a->name()));
    }
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  }
  s.version = to;
}

void slice_convert(NormSite& s) {
  const int to = schema_version("Slice", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version < 10 && to >= 10) {
    const auto starts = attr_ints(n, "starts"), ends = attr_ints(n, "ends"), axes = attr_ints(n, "axes");
    for (const char* a : {"starts", "ends", "axes"}) remove_attr(n, a);
    set_input(n, 1, s.add_int64s(s.stem() + "_starts", starts.value_or(std::vector<int64_t>{})));
    set_input(n, 2, s.add_int64s(s.stem() + "_ends", ends.value_or(std::vector<int64_t>{})));
    if (axes) set_input(n, 3, s.add_int64s(s.stem() + "_axes", *axes));
    s.report.set.push_back("starts, ends, axes as inputs");
  } else if (s.version >= 10 && to < 10) {
    const auto starts = ints_input(s, 1, "starts", 10), ends = ints_input(s, 2, "ends", 10);
    auto axes = ints_input(s, 3, "axes", 10);
    if (const auto steps = ints_input(s, 4, "steps", 10)) {
      for (int64_t v : *steps)
        if (v != 1) refuse(s, fmt::format("a step of {}: Slice below version 10 only steps by 1", v));
    }
    if (axes) normalize_axes(s, *axes, s.rank_of(n.input(0)));
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    set_ints(n, "starts", starts.value_or(std::vector<int64_t>{}));
    set_ints(n, "ends", ends.value_or(std::vector<int64_t>{}));
    if (axes) set_ints(n, "axes", *axes);
    s.report.set.push_back("starts, ends, axes as attributes");
  }
  s.version = to;
}

void topk_convert(NormSite& s) {
  const int to = schema_version("TopK", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version >= 11 && to < 11) {
    for (const char* a : {"largest", "sorted"}) {
      if (attr_int(n, a, 1) != 1) refuse(s, fmt::format("{} = 0: TopK below version 11 always returns the largest, sorted", a));
      remove_attr(n, a);
    }
  }
  if (s.version < 10 && to >= 10) {
    const int64_t k = attr_int(n, "k", 0);
    remove_attr(n, "k");
    set_input(n, 1, s.add_int64s(s.stem() + "_k", {k}));
    s.report.set.push_back(fmt::format("k = {} as input '{}'", k, n.input(1)));
  } else if (s.version >= 10 && to < 10) {
    const auto k = ints_input(s, 1, "K", 10);
    if (!k || k->size() != 1) refuse(s, "K must be one value");
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    set_int(n, "k", (*k)[0]);
    s.report.set.push_back(fmt::format("k = {} as an attribute", (*k)[0]));
  }
  s.version = to;
}

void squeeze_convert(NormSite& s) {
  const std::string op = s.node.op_type();
  const int to = schema_version(op, s.target_opset);
  onnx::NodeProto& n = s.node;
  std::optional<std::vector<int64_t>> axes =
      s.version >= 13 ? ints_input(s, 1, "axes", 13) : attr_ints(n, "axes");
  if (axes && to < 11) {
    auto rank = s.rank_of(n.input(0));
    if (rank && op == "Unsqueeze") *rank += static_cast<int>(axes->size());
    normalize_axes(s, *axes, rank);
  }
  remove_attr(n, "axes");
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  if (axes && to >= 13) {
    set_input(n, 1, s.add_int64s(s.stem() + "_axes", *axes));
    s.report.set.push_back(fmt::format("axes as input '{}'", n.input(1)));
  } else if (axes) {
    set_ints(n, "axes", *axes);
    s.report.set.push_back("axes as an attribute");
  }
  s.version = to;
}

const Step clip_11{"clip_11", "attr_inputs", clip_convert, clip_convert};
const Step slice_10{"slice_10", "attr_inputs", slice_convert, slice_convert};
const Step topk_10{"topk_10", "attr_inputs", topk_convert, topk_convert};
const Step squeeze_11{"squeeze_11", "attr_inputs", squeeze_convert, squeeze_convert};

}  // namespace bnorm::steps
