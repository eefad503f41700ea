// Equal, Greater, Less, And, Or, Xor, and Add, Sub, Mul, Div, Pow across 7:
// legacy broadcast <-> numpy broadcast (ONNX 1.12 has no adapter for the
// comparisons either way: "No Adapter From Version $7 for Less", "No Adapter
// For And"; its adapters for the arithmetic ops need every dim as a number,
// and fail on a symbolic batch: "Dimension is a param instead of an int").
//
//   Before (7+):  Less(A [2, 3, 4], B [3, 4])             numpy broadcast
//   After  (1-6): Less(A, B) broadcast = 1                B aligned at the end
//
// Down (7+ -> below 7): both input shapes must be known (else Error naming
// the node and the input). Equal shapes: nothing. B of rank <= A's whose
// dims equal A's trailing dims or are 1: broadcast = 1 (the rule of ONNX's
// BroadcastBackwardCompatibility for Add). Anything else (A broadcast
// against B, unknown dims) is refused, naming the node and both shapes.
// Element types must exist at the target version (Less/Greater-7 have no
// integer types, Equal-7 no float ones: refused, naming the value).
// Up (below 7 -> 7+): broadcast = 0 or absent: shapes are equal, nothing;
// broadcast = 1 without axis, or with B aligned at the end: the attributes
// dropped; B aligned at another `axis`: Unsqueeze(B) with trailing axes so
// numpy aligns it there (needs both ranks). Formula: unchanged.
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

namespace {

std::string shape_text(const std::vector<int64_t>& d) {
  std::vector<std::string> parts;
  for (int64_t x : d) parts.push_back(x < 0 ? "?" : std::to_string(x));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// Whether B broadcasts into A without changing A's shape, B aligned at the end.
bool suffix_of(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (b.size() > a.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t da = a[a.size() - b.size() + i], db = b[i];
    if (db != 1 && (db < 0 || db != da)) return false;
  }
  return true;
}

// Each dim of the value as written: its size, or its symbolic name ("" unknown).
std::vector<std::string> dim_names(const NormSite& s, const std::string& value) {
  std::vector<std::string> out;
  const onnx::TypeProto* t = s.env->index->declared_type(*s.scope, value);
  if (const auto d = s.dims_of(value); d && !(t && t->has_tensor_type() && t->tensor_type().has_shape())) {
    for (int64_t x : *d) out.push_back(x < 0 ? "" : std::to_string(x));
    return out;
  }
  if (!t || !t->has_tensor_type()) return out;
  for (const auto& d : t->tensor_type().shape().dim()) {
    out.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? "$" + d.dim_param() : "");
  }
  return out;
}

void compare_down(NormSite& s, int to) {
  refuse_missing_types(s, to);
  std::vector<int64_t> dims[2];
  for (int i : {0, 1}) {
    const auto d = s.dims_of(s.node.input(i));
    if (!d) {
      refuse(s, fmt::format("{} broadcasts numpy-style from version 7; below it the legacy broadcast attribute needs "
                            "each input's shape, and the shape of input '{}' is unknown", s.node.op_type(), s.node.input(i)));
    }
    dims[i] = *d;
  }
  if (inputs_same_shape(s)) return;
  if (!suffix_of(dims[0], dims[1])) {
    refuse(s, fmt::format("inputs of shapes {} and {}: below version 7 only B broadcast into A's shape (B's dims equal "
                          "to A's last dims or 1) can be said", shape_text(dims[0]), shape_text(dims[1])));
  }
  set_int(s.node, "broadcast", 1);
  s.report.set.push_back("broadcast = 1");
}

void compare_up(NormSite& s) {
  onnx::NodeProto& n = s.node;
  const bool broadcast = attr_int(n, "broadcast", 0) != 0;
  const auto* axis_attr = find_attr(n, "axis");
  std::vector<int64_t> trailing;
  if (broadcast && axis_attr) {
    const auto ra = s.rank_of(n.input(0)), rb = s.rank_of(n.input(1));
    if (!ra || !rb) refuse(s, fmt::format("broadcast = 1 with axis = {} needs the ranks of both inputs, and one is unknown", axis_attr->i()));
    const int64_t axis = axis_attr->i() < 0 ? axis_attr->i() + *ra : axis_attr->i();
    if (axis < 0 || axis + *rb > *ra) refuse(s, fmt::format("B of rank {} does not fit A of rank {} at axis {}", *rb, *ra, axis));
    for (int64_t k = *rb; k < *ra - axis; ++k) trailing.push_back(k);
  }
  for (const char* a : {"broadcast", "axis"}) {
    if (const auto* at = find_attr(n, a)) s.report.dropped.push_back(fmt::format("{} = {}", a, at->i()));
    remove_attr(n, a);
  }
  if (trailing.empty()) return;
  const std::string b = n.input(1), out = s.fresh(b + "_aligned");
  if (s.target_opset >= 13) {
    s.add_before("Unsqueeze", {b, s.add_int64s(s.stem() + "_axes", trailing)}, {out});
  } else {
    set_ints(s.add_before("Unsqueeze", {b}, {out}), "axes", trailing);
  }
  n.set_input(1, out);
  s.report.set.push_back(fmt::format("B unsqueezed to align at the old axis ('{}')", out));
}

}  // namespace

bool inputs_same_shape(const NormSite& s) {
  std::vector<std::string> first;
  for (int i = 0; i < s.node.input_size(); ++i) {
    const auto d = dim_names(s, s.node.input(i));
    if (d.empty() && !s.dims_of(s.node.input(i))) return false;  // unknown rank
    if (std::any_of(d.begin(), d.end(), [](const std::string& x) { return x.empty(); })) return false;
    if (i == 0) first = d;
    else if (d != first) return false;
  }
  return true;
}

void compare_7_convert(NormSite& s) {
  const int to = schema_version(s.node.op_type(), s.target_opset);
  if (s.version >= 7 && to < 7) compare_down(s, to);
  else if (s.version < 7 && to >= 7) compare_up(s);
  s.version = to;
}

const Step compare_7{"compare_7", "compare_7", compare_7_convert, compare_7_convert};

}  // namespace bnorm::steps
