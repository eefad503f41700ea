// Reshape across 5: the shape moves from an attribute to an input.
//
//   Reshape-1: Reshape(data) shape = [..]
//   Reshape-5: Reshape(data, shape)        int64 1-D input
//
// Up: the `shape` attribute becomes an int64 initializer (ONNX 1.12's
// adapter writes an int64 Constant node, which opsets 5-8 do not allow:
// Constant-1 has only float types). Down: the shape input must be a
// constant, or the output's dims inferred (bnorm's shape inference
// propagates Shape/Gather/Concat) with one unknown at most, written -1;
// else Error naming the node and the input (ONNX 1.12's adapter asserts,
// ir.h eraseOutput); it becomes the attribute; allowzero
// (14) must be 0 (dropped). Element types must exist at the target.
// Formula: unchanged (0 copies the input's dim, -1 is inferred, at both).
#include <fmt/format.h>

#include <algorithm>

#include "model/attrs.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

namespace {

// Whether `v` is computed from shapes and constants only (Shape, Size and
// constants at its roots; no graph input's values read): then its value is
// fixed by the input shapes, and the output's inferred dims say it.
bool from_shapes_only(const NormSite& s, const std::string& v, int depth) {
  if (depth > 32 || !s.env || !s.env->index || !s.scope) return false;
  if (s.env->index->constant(*s.scope, v)) return true;
  const GraphIndex::Value* value = s.env->index->find(*s.scope, v);
  const onnx::NodeProto* n = value ? value->producer : nullptr;
  if (!n || !is_default_domain(n->domain())) return false;
  if (n->op_type() == "Shape" || n->op_type() == "Size") return true;
  for (const auto& a : n->attribute())
    if (a.has_g() || a.graphs_size() > 0) return false;
  for (const auto& in : n->input())
    if (!in.empty() && !from_shapes_only(s, in, depth + 1)) return false;
  return n->input_size() > 0;
}

// A shape input that is no constant but computed from shapes
// (Concat(Gather(Shape(x)), ...)): the output's inferred dims, with -1 for
// at most one unknown (symbolic) dim, which Reshape infers from the element
// count; a shape read from a graph input, or more unknowns: Error.
std::vector<int64_t> shape_from_output(NormSite& s) {
  const std::string& y = s.node.output(0);
  if (!from_shapes_only(s, s.node.input(1), 0)) {
    refuse(s, fmt::format("input '{}' (shape) is not a constant, nor computed from shapes alone, so it cannot become an "
                          "attribute below version 5",
                          s.node.input(1)));
  }
  const auto dims = s.dims_of(y);
  const auto unknown = dims ? std::count(dims->begin(), dims->end(), -1) : 0;
  if (!dims || unknown > 1) {
    refuse(s, fmt::format("input '{}' (shape) is not a constant and the dims of the output '{}' are not known well "
                          "enough to write it (one unknown dim at most): it cannot become an attribute below version 5",
                          s.node.input(1), y));
  }
  s.report.set.push_back(fmt::format("shape from the output's inferred dims (input '{}' is computed)", s.node.input(1)));
  return *dims;
}

}  // namespace

void reshape_5_convert(NormSite& s) {
  const int to = schema_version("Reshape", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version < 5 && to >= 5) {
    const auto* a = find_attr(n, "shape");
    const std::vector<int64_t> shape = a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
    remove_attr(n, "shape");
    remove_attr(n, "consumed_inputs");
    set_input(n, 1, s.add_int64s(s.stem() + "_shape", shape));
    s.report.set.push_back(fmt::format("shape as input '{}'", n.input(1)));
  } else if (s.version >= 5 && to < 5) {
    refuse_missing_types(s, to);
    if (attr_int(n, "allowzero", 0) != 0) refuse(s, "allowzero = 1 has no form below version 14");
    if (n.input_size() < 2 || n.input(1).empty()) refuse(s, "the shape input is missing");
    const std::vector<int64_t> shape = constant_input(s, 1) ? constant_ints(s, 1, "shape", "")
                                                            : shape_from_output(s);
    remove_attr(n, "allowzero");
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    set_ints(n, "shape", shape);
    s.report.set.push_back("shape as an attribute");
  }
  s.version = to;
}

const Step reshape_5{"reshape_5", "reshape_5", reshape_5_convert, reshape_5_convert};

}  // namespace bnorm::steps
