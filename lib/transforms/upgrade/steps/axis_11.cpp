// Negative axes and indices going below opset 11, for the ops whose
// version 11 only allowed them (and two neighbours ONNX 1.12 gets wrong):
//
//   Before (11+):  Concat(a, b) axis = -1            X [2, 3, 4]
//   After  (10-):  Concat(a, b) axis = 2
//
//   Before (11+):  Gather(X, idx) axis = -1          idx may hold -1
//   After  (10-):  Gather(X, idx') axis = 2          idx' = idx + (idx < 0) * dim
//
// Ops: ArgMax, ArgMin, Compress, Concat, Gather, Hardmax, LogSoftmax, OneHot,
// Reduce* (axes), Scan (scan_input_axes, scan_output_axes), Softmax; Split's
// own step (split_12_13.cpp) calls axis_11_normalize.
// ONNX 1.12 has no 11 -> 10 adapter for Compress, Gather, Hardmax, OneHot,
// Scan, Split, and keeps a negative axis for the others (invalid at 10).
// Also crossed here going down: ReduceSum 13 -> 12 (ONNX's adapter asserts,
// ir.h eraseOutput): a constant `axes` input becomes the attribute;
// ArgMax/ArgMin 12 -> 11: select_last_index must be 0 (dropped).
//
// ScatterElements below 11 (step scatter_elements_11, here for Gather's
// index rewrite): it does not exist there, and Scatter-9 is the same op
// under its earlier name (ONNX's 10 -> 11 adapter renames it the other way):
//   Before (11+):  ScatterElements(X, idx, U) axis = -1, reduction = none
//   After  (9, 10): Scatter(X, idx', U) axis = r - 1     idx' as Gather's
// Preconditions (Error naming the node): target 9 or 10 (no Scatter before
// 9), reduction none (16+: add/mul/max/min have no form before),
// X's rank known for a negative axis, the axis dim static for indices that
// may be negative. Formula: the same element written at the same place.
//
// Preconditions (else Error(unsupported) naming the node, before any
// rewrite): the rank of the value an axis counts in is known when the axis
// is negative (X; OneHot: indices + 1; Scan: each scan input and output);
// element types exist at the target version.
// Gather/OneHot indices: constant ones are rewritten in a new initializer
// (the axis dim / depth must be known when one is negative); others get
//   d = Cast(idx, double); idx' = Cast(d + Cast(Less(d, 0), double) * dim, T)
// (every op there since opset 1; exact for |idx| < 2^53), dim the axis dim
// of X (must be static) or OneHot's constant depth. OneHot's floating
// indices count as truncated toward zero (-0.5 is index 0, -1.5 is -1), so
// they are truncated first: a constant's values, or d = Cast(Cast(idx, int64),
// double) (Cast truncates); else -0.5 + depth would pick the last index. Out-of-range indices
// stay out of range. Formula otherwise: unchanged. Going up only the
// version moves (ReduceSum 12 -> 13: the axes attribute becomes an int64
// initializer input). Scan below 9 (another form) is refused.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

namespace {

bool is_reduce(const std::string& op) { return op.rfind("Reduce", 0) == 0; }

int64_t normalized(const NormSite& s, int64_t axis, std::optional<int> rank, const std::string& what) {
  if (axis >= 0) return axis;
  if (!rank) refuse(s, fmt::format("{} {} is negative, which versions below 11 do not allow, and the rank is unknown", what, axis));
  return axis + *rank;
}

// The attribute `name` (int or ints) made non-negative, ranks[i] the rank for its i-th value.
struct AxisFix {
  std::string name;
  std::vector<int64_t> values;
  bool list = false;
};

std::optional<AxisFix> fix_axis(const NormSite& s, const std::string& name, const std::vector<std::optional<int>>& ranks) {
  const auto* a = find_attr(s.node, name);
  if (!a) return std::nullopt;
  AxisFix f{name, {}, a->type() == onnx::AttributeProto::INTS};
  const std::vector<int64_t> v = f.list ? std::vector<int64_t>(a->ints().begin(), a->ints().end())
                                        : std::vector<int64_t>{a->i()};
  for (size_t i = 0; i < v.size(); ++i) {
    f.values.push_back(normalized(s, v[i], ranks.empty() ? std::nullopt : ranks[std::min(i, ranks.size() - 1)], name));
  }
  return f;
}

// Gather/OneHot indices: what replaces input `index` below 11.
struct IndexFix {
  std::optional<Tensor> constant;  // the rewritten constant
  int64_t dim = 0;                 // else: the runtime rewrite with this dim
  bool runtime = false;
};

std::optional<IndexFix> fix_indices(const NormSite& s, int index, std::optional<int64_t> dim, const std::string& what) {
  if (index >= s.node.input_size() || s.node.input(index).empty()) return std::nullopt;
  const std::string& name = s.node.input(index);
  if (auto t = constant_input(s, index)) {
    std::vector<double> v = t->to_f64();
    if (is_floating(t->dtype))
      for (double& x : v) x = std::trunc(x);  // the index each value means
    if (std::none_of(v.begin(), v.end(), [](double x) { return x < 0; })) return std::nullopt;
    if (!dim) refuse(s, fmt::format("input '{}' holds negative indices, which count from the end only from version 11, "
                                    "and {} is unknown", name, what));
    for (double& x : v)
      if (x < 0) x += static_cast<double>(*dim);
    IndexFix f;
    f.constant = Tensor::from_f64(t->dtype, t->dims, v);
    return f;
  }
  if (!dim) refuse(s, fmt::format("input '{}' is not a constant and may hold negative indices, which count from the end "
                                  "only from version 11; rewriting them needs {}, which is unknown", name, what));
  if (!s.type_of(name)) refuse(s, fmt::format("the type of input '{}' is unknown", name));
  IndexFix f;
  f.dim = *dim;
  f.runtime = true;
  return f;
}

std::string scalar_double(NormSite& s, const std::string& stem, double v) {
  Tensor t = Tensor::from_f64(DType::float64, {}, {v});
  t.name = s.fresh(stem);
  s.initializers.push_back(to_proto(t));
  return t.name;
}

void apply_indices(NormSite& s, int index, const IndexFix& f) {
  const std::string name = s.node.input(index);
  if (f.constant) {
    Tensor t = *f.constant;
    t.name = s.fresh(name + "_nonnegative");
    s.initializers.push_back(to_proto(t));
    s.node.set_input(index, t.name);
    s.report.set.push_back(fmt::format("negative indices of '{}' made non-negative in '{}'", name, t.name));
    return;
  }
  const int64_t opset = s.target_opset;
  const auto legacy = [&](onnx::NodeProto& n) -> onnx::NodeProto& {
    if (opset < 7) set_int(n, "broadcast", 1);
    return n;
  };
  const std::string stem = s.stem() + "_" + name;
  const std::string d = s.fresh(stem + "_f64"), neg = s.fresh(stem + "_negative"), negd = s.fresh(stem + "_negative_f64"),
                    shift = s.fresh(stem + "_shift"), sum = s.fresh(stem + "_sum"), out = s.fresh(stem + "_nonnegative");
  std::string whole = name;  // floating indices truncated toward zero first, as they are read
  if (is_floating(static_cast<DType>(*s.type_of(name)))) {
    whole = s.fresh(stem + "_int64");
    set_cast_to(s.add_before("Cast", {name}, {whole}), opset, onnx::TensorProto::INT64);
  }
  set_cast_to(s.add_before("Cast", {whole}, {d}), opset, onnx::TensorProto::DOUBLE);
  legacy(s.add_before("Less", {d, scalar_double(s, stem + "_zero", 0.0)}, {neg}));
  set_cast_to(s.add_before("Cast", {neg}, {negd}), opset, onnx::TensorProto::DOUBLE);
  legacy(s.add_before("Mul", {negd, scalar_double(s, stem + "_dim", static_cast<double>(f.dim))}, {shift}));
  s.add_before("Add", {d, shift}, {sum});
  set_cast_to(s.add_before("Cast", {sum}, {out}), opset, static_cast<int32_t>(*s.type_of(name)));
  s.node.set_input(index, out);
  s.report.set.push_back(fmt::format("negative indices of '{}' made non-negative at run time ('{}')", name, out));
}

std::optional<int64_t> dim_at(const NormSite& s, const std::string& value, int64_t axis) {
  const auto dims = s.dims_of(value);
  if (!dims || axis < 0 || axis >= static_cast<int64_t>(dims->size()) || (*dims)[axis] < 0) return std::nullopt;
  return (*dims)[axis];
}

}  // namespace

void axis_11_normalize(NormSite& s) {
  if (s.target_opset >= 11) return;
  const std::string op = s.node.op_type();
  const auto rank0 = s.node.input_size() > 0 ? s.rank_of(s.node.input(0)) : std::nullopt;
  std::vector<AxisFix> fixes;
  if (op == "Scan") {
    const int64_t scans = attr_int(s.node, "num_scan_inputs", 0);
    const int64_t states = s.node.input_size() - scans;
    std::vector<std::optional<int>> in_ranks, out_ranks;
    for (int i = static_cast<int>(states); i < s.node.input_size(); ++i) in_ranks.push_back(s.rank_of(s.node.input(i)));
    for (int i = static_cast<int>(states); i < s.node.output_size(); ++i) out_ranks.push_back(s.rank_of(s.node.output(i)));
    in_ranks.push_back(std::nullopt);
    out_ranks.push_back(std::nullopt);
    if (auto f = fix_axis(s, "scan_input_axes", in_ranks)) fixes.push_back(*f);
    if (auto f = fix_axis(s, "scan_output_axes", out_ranks)) fixes.push_back(*f);
  } else if (op == "OneHot") {
    const auto r = s.rank_of(s.node.input(0));
    if (auto f = fix_axis(s, "axis", {r ? std::optional<int>(*r + 1) : std::nullopt})) fixes.push_back(*f);
  } else {
    if (auto f = fix_axis(s, is_reduce(op) ? "axes" : "axis", {rank0})) fixes.push_back(*f);
  }
  for (const auto& f : fixes) {
    if (f.list) set_ints(s.node, f.name, f.values);
    else set_int(s.node, f.name, f.values[0]);
  }
}

void axis_11_convert(NormSite& s) {
  const std::string op = s.node.op_type();
  const int to = schema_version(op, s.target_opset);
  onnx::NodeProto& n = s.node;
  if (to > s.version) {  // up: only ReduceSum's axes move (to an input at 13)
    const auto* a = find_attr(n, "axes");
    if (op == "ReduceSum" && to >= 13 && s.version < 13 && a) {
      const std::vector<int64_t> axes(a->ints().begin(), a->ints().end());
      remove_attr(n, "axes");
      if (!axes.empty()) {
        set_input(n, 1, s.add_int64s(s.stem() + "_axes", axes));
        s.report.set.push_back(fmt::format("axes as input '{}'", n.input(1)));
      }
    }
    s.version = to;
    return;
  }
  // Match: every refusal before any rewrite.
  if (op != "Scan" || to >= 9) refuse_missing_types(s, to);  // Scan-8's inputs start with sequence_lens: scan_8_9.cpp
  if ((op == "ArgMax" || op == "ArgMin") && to < 12 && attr_int(n, "select_last_index", 0) != 0) {
    refuse(s, "select_last_index = 1 picks the last of equal values, which versions below 12 cannot say");
  }
  std::optional<std::vector<int64_t>> reduce_axes;
  if (op == "ReduceSum" && s.version >= 13 && to < 13) {
    if (n.input_size() > 1 && !n.input(1).empty()) {
      reduce_axes = constant_ints(s, 1, "axes", "become an attribute below version 13");
    }
    if ((!reduce_axes || reduce_axes->empty()) && attr_int(n, "noop_with_empty_axes", 0) != 0) {
      refuse(s, "noop_with_empty_axes = 1 with no axes leaves the data unreduced, which has no form below version 13 "
                "(no axes means every axis there)");
    }
  }
  std::optional<IndexFix> indices;
  int index_input = 1;
  if (s.target_opset < 11 && op == "Gather") {
    const auto r = n.input_size() > 0 ? s.rank_of(n.input(0)) : std::nullopt;
    const int64_t axis = normalized(s, attr_int(n, "axis", 0), r, "axis");
    indices = fix_indices(s, 1, dim_at(s, n.input(0), axis), fmt::format("the size of axis {} of input '{}'", axis, n.input(0)));
  } else if (s.target_opset < 11 && op == "OneHot") {
    index_input = 0;
    std::optional<int64_t> depth;
    if (const auto t = constant_input(s, 1); t && t->numel() == 1) {
      if (const auto v = t->to_i64()) depth = (*v)[0];
    }
    indices = fix_indices(s, 0, depth, fmt::format("the depth ('{}' is not a one-value constant)", n.input(1)));
  }
  {
    NormSite probe = s;  // the axis attributes' refusals, before anything is written
    axis_11_normalize(probe);
  }
  // Rewrite.
  if (op == "ArgMax" || op == "ArgMin") {
    if (to < 12 && remove_attr(n, "select_last_index")) s.report.dropped.push_back("select_last_index = 0");
  }
  if (op == "ReduceSum" && s.version >= 13 && to < 13) {
    remove_attr(n, "noop_with_empty_axes");
    drop_input(n, 1);
    if (reduce_axes && !reduce_axes->empty()) {
      set_ints(n, "axes", *reduce_axes);
      s.report.set.push_back("axes as an attribute");
    }
  }
  std::vector<std::string> before;
  for (const char* a : {"axis", "axes", "scan_input_axes", "scan_output_axes"}) {
    if (const auto* at = find_attr(n, a)) before.push_back(at->SerializeAsString());
  }
  axis_11_normalize(s);
  std::vector<std::string> after;
  for (const char* a : {"axis", "axes", "scan_input_axes", "scan_output_axes"}) {
    if (const auto* at = find_attr(n, a)) after.push_back(at->SerializeAsString());
  }
  if (before != after) s.report.set.push_back("negative axes made non-negative");
  if (indices) apply_indices(s, index_input, *indices);  // after the axes: the new indices' rank is not known
  s.version = to;
}

const Step axis_11{"axis_11", "axis_11", axis_11_convert, axis_11_convert};

namespace {

void scatter_elements_up(NormSite&) {}  // never matches going up (Scatter-9 goes up by ONNX's adapter)

void scatter_elements_down(NormSite& s) {
  onnx::NodeProto& n = s.node;
  if (s.target_opset < 9) refuse(s, "neither ScatterElements nor its earlier form Scatter exists before opset 9");
  const std::string reduction = attr_string(n, "reduction", "none");
  if (reduction != "none") {
    refuse(s, fmt::format("reduction '{}' has no form below opset {} (Scatter-9 only writes)", reduction,
                          reduction == "max" || reduction == "min" ? 18 : 16));
  }
  if (n.input_size() < 3) refuse(s, "ScatterElements needs its three inputs");
  const auto r = s.rank_of(n.input(0));
  const int64_t axis = normalized(s, attr_int(n, "axis", 0), r, "axis");
  const auto indices =
      fix_indices(s, 1, dim_at(s, n.input(0), axis), fmt::format("the size of axis {} of input '{}'", axis, n.input(0)));
  if (remove_attr(n, "reduction")) s.report.dropped.push_back("reduction = none");
  if (find_attr(n, "axis")) set_int(n, "axis", axis);
  n.set_op_type("Scatter");
  if (indices) apply_indices(s, 1, *indices);
  s.version = 9;
  s.report.set.push_back("written as Scatter-9, ScatterElements' earlier name");
}

bool scatter_elements_11_applies(const onnx::NodeProto& n, int64_t from, int64_t to) {
  return n.op_type() == "ScatterElements" && from >= 11 && to < 11;
}

}  // namespace

const Step scatter_elements_11{"scatter_elements_11", "axis_11", scatter_elements_up, scatter_elements_down,
                               scatter_elements_11_applies};

}  // namespace bnorm::steps
