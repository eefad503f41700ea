#include "eval/run/input_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "model/attrs.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "model/node_label.h"
#include "model/op_versions.h"
#include "model/tensor.h"

namespace bnorm {

namespace {

// The shapes of the main graph's values, as far as they are known: graph
// inputs (given or drawn), constants, else ONNX's shape inference run once
// with the inputs' sizes; an unknown dim is -1.
class Shapes {
 public:
  Shapes(const Model& model, const std::map<std::string, std::vector<int64_t>>& inputs)
      : model_(model), inputs_(inputs), index_(model.proto) {}

  std::optional<std::vector<int64_t>> of(const std::string& name) {
    if (auto it = inputs_.find(name); it != inputs_.end()) return it->second;
    if (auto c = index_.constant(index_.main(), name)) {
      return std::vector<int64_t>(c->tensor->dims().begin(), c->tensor->dims().end());
    }
    if (!inferred_) infer();
    const auto& g = inferred_->graph();
    for (const auto* list : {&g.value_info(), &g.output()}) {
      for (const auto& vi : *list) {
        if (vi.name() != name || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
        std::vector<int64_t> dims;
        for (const auto& d : vi.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        return dims;
      }
    }
    return std::nullopt;
  }

  const GraphIndex& index() const { return index_; }

 private:
  void infer() {
    onnx::ModelProto copy = model_.proto;
    for (auto& in : *copy.mutable_graph()->mutable_input()) {
      const auto it = inputs_.find(in.name());
      if (it == inputs_.end() || !in.type().has_tensor_type()) continue;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
    }
    inferred_ = with_inferred_shapes(copy);
  }

  const Model& model_;
  const std::map<std::string, std::vector<int64_t>>& inputs_;
  GraphIndex index_;
  std::optional<onnx::ModelProto> inferred_;
};

[[noreturn]] void cannot_choose(const std::string& input, const std::string& what) {
  throw Error(ErrorKind::usage, fmt::format("random input '{}': {}, so bnorm cannot choose valid values for it", input, what),
              fmt::format("give it with --input {}=FILE, or its values with --input-range {}=LO:HI", input, input));
}

// One consumer's view: the node, which input, and the input's drawn shape.
struct Site {
  const onnx::NodeProto& node;
  const std::string& input;
  const std::vector<int64_t>& shape;
  int version;
  Shapes& shapes;
  const std::map<std::string, Tensor>& given;
  const Model& model;

  std::string label() const { return fmt::format("{} '{}'", node.op_type(), node_label(node)); }

  // Dim `axis` (negative counts from the back) of the node's input `at`.
  int64_t dim(int at, int64_t axis, int64_t* normalised = nullptr) const {
    const std::string& data = node.input(at);
    const auto s = shapes.of(data);
    if (!s) cannot_choose(input, fmt::format("the shape of '{}' (read by {}) is unknown", data, label()));
    const auto rank = static_cast<int64_t>(s->size());
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) cannot_choose(input, fmt::format("axis {} is outside '{}' of rank {} ({})", axis, data, rank, label()));
    if ((*s)[a] < 0) cannot_choose(input, fmt::format("dim {} of '{}' (read by {}) is unknown", a, data, label()));
    if (normalised) *normalised = a;
    return (*s)[a];
  }

  // The scalar value of the node's input `at`: a constant or a given input.
  int64_t scalar(int at) const {
    const std::string& name = node.input(at);
    std::optional<Tensor> t;
    if (auto c = shapes.index().constant(shapes.index().main(), name)) t = decode_as_saved(model, *c->tensor);
    else if (auto it = given.find(name); it != given.end()) t = it->second;
    const auto v = t && t->numel() == 1 ? t->to_i64() : std::nullopt;
    if (!v) cannot_choose(input, fmt::format("'{}' (read by {}) is neither a constant nor a given scalar", name, label()));
    return (*v)[0];
  }

  InputRule indices(int64_t s, bool negative, const std::string& what) const {
    return {{{negative ? -s : 0, s - 1}}, false, -1, {s}, negative,
            fmt::format("indices of {} ({}, size {})", label(), what, s)};
  }

  // GatherND, ScatterND: the last axis of indices addresses data dims b, b+1, ...
  InputRule tuples(int64_t b) const {
    if (shape.empty()) cannot_choose(input, fmt::format("it is a scalar, not index tuples ({})", label()));
    InputRule r;
    r.negative = true;
    for (int64_t j = 0; j < shape.back(); ++j) {
      const int64_t s = dim(0, b + j);
      r.along_last.push_back({-s, s - 1});
      r.sizes.push_back(s);
    }
    r.why = fmt::format("index tuples of {} (dims {}.. of '{}')", label(), b, node.input(0));
    return r;
  }
};

bool no_reduction(const Site& at) { return attr_string(at.node, "reduction", "none") == "none"; }

// The rule `at` imposes, if any.
std::optional<InputRule> rule_of(const Site& at, int i) {
  const std::string& op = at.node.op_type();
  const auto axis_of = [&](int64_t fallback) { return attr_int(at.node, "axis", fallback); };
  int64_t a = 0;
  if ((op == "Gather" || op == "GatherElements") && i == 1) {
    const int64_t s = at.dim(0, axis_of(0), &a);
    return at.indices(s, true, fmt::format("axis {} of '{}'", a, at.node.input(0)));
  }
  if ((op == "Scatter" || op == "ScatterElements") && i == 1) {
    const int64_t s = at.dim(0, axis_of(0), &a);
    InputRule r = at.indices(s, !(op == "Scatter" && at.version < 11), fmt::format("axis {} of '{}'", a, at.node.input(0)));
    r.distinct = no_reduction(at);
    r.axis = a;
    return r;
  }
  if (op == "GatherND" && i == 1) return at.tuples(attr_int(at.node, "batch_dims", 0));
  if (op == "ScatterND" && i == 1) {
    InputRule r = at.tuples(0);
    r.distinct = no_reduction(at);
    return r;
  }
  if (op == "RoiAlign" && i == 2) {
    const int64_t n = at.dim(0, 0);
    return InputRule{{{0, n - 1}}, false, -1, {}, false, fmt::format("batch_indices of {} (N = {})", at.label(), n)};
  }
  if (op == "TopK" && i == 1) {
    const int64_t s = at.dim(0, axis_of(-1), &a);
    return InputRule{{{std::min<int64_t>(1, s), s}}, false, -1, {}, false,
                     fmt::format("K of {} (axis {} of '{}', size {})", at.label(), a, at.node.input(0), s)};
  }
  if (op == "OneHot" && i == 0 && at.node.input_size() > 1) {
    const int64_t depth = at.scalar(1);
    return InputRule{{{at.version >= 11 ? -depth : 0, depth - 1}}, false, -1, {}, false,
                     fmt::format("indices of {} (depth {})", at.label(), depth)};
  }
  if (op == "Reshape" && i == 1) {
    const auto data = at.shapes.of(at.node.input(0));
    if (!data || std::count(data->begin(), data->end(), -1)) {
      cannot_choose(at.input, fmt::format("the shape of '{}' (read by {}) is unknown", at.node.input(0), at.label()));
    }
    // The data's own shape; a shorter target ends in -1, a longer one in 1s.
    const size_t n = at.shape.empty() ? 0 : static_cast<size_t>(at.shape.back());
    InputRule r;
    for (size_t j = 0; j < n; ++j) {
      const int64_t d = j + 1 == n && n < data->size() ? -1 : j < data->size() ? (*data)[j] : 1;
      r.along_last.push_back({d, d});
    }
    r.why = fmt::format("shape of {} (the shape of '{}')", at.label(), at.node.input(0));
    if (r.along_last.empty()) return std::nullopt;  // an empty shape: nothing is drawn
    return r;
  }
  const auto fixed = [&](const char* what, int64_t lo, int64_t hi) {
    return InputRule{{{lo, hi}}, false, -1, {}, false, fmt::format("{} of {} ([{}, {}])", what, at.label(), lo, hi)};
  };
  if (op == "Expand" && i == 1) return fixed("shape", 1, 1);
  if (op == "Tile" && i == 1) return fixed("repeats", 1, 2);
  if (op == "ConstantOfShape" && i == 0) return fixed("shape", 1, 4);
  if (op == "Range" && i == 2) return fixed("delta", 1, 3);
  return std::nullopt;
}

// Both rules at once: ranges intersected, duplicates allowed.
InputRule intersect(const std::string& input, const InputRule& x, const InputRule& y) {
  const size_t n = std::max(x.along_last.size(), y.along_last.size());
  if (x.along_last.size() != n && x.along_last.size() != 1) return intersect(input, y, x);
  if (y.along_last.size() != n && y.along_last.size() != 1) {
    throw Error(ErrorKind::usage, fmt::format("random input '{}' is {} and {}: they disagree on its last dim", input, x.why, y.why),
                fmt::format("give it with --input {}=FILE", input));
  }
  InputRule r;
  for (size_t j = 0; j < n; ++j) {
    const IndexRange& a = x.along_last[x.along_last.size() == 1 ? 0 : j];
    const IndexRange& b = y.along_last[y.along_last.size() == 1 ? 0 : j];
    const IndexRange c{std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
    if (a.lo <= a.hi && b.lo <= b.hi && c.lo > c.hi) {
      throw Error(ErrorKind::usage,
                  fmt::format("random input '{}' is {} and {}: no value is valid for both ([{}, {}] and [{}, {}])", input,
                              x.why, y.why, a.lo, a.hi, b.lo, b.hi),
                  fmt::format("give it with --input {}=FILE, or its values with --input-range {}=LO:HI", input, input));
    }
    r.along_last.push_back(c);
  }
  r.why = x.why + "; " + y.why;
  return r;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::int8: case DType::int16: case DType::int32: case DType::int64: case DType::int4: case DType::int2:
    case DType::uint8: case DType::uint16: case DType::uint32: case DType::uint64: case DType::uint4: case DType::uint2:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::map<std::string, InputRule> input_rules(const Model& model, const std::map<std::string, std::vector<int64_t>>& drawn,
                                             const std::map<std::string, std::vector<int64_t>>& shapes,
                                             const std::map<std::string, Tensor>& given) {
  std::map<std::string, DType> integer;
  for (const auto& in : model.proto.graph().input()) {
    const auto t = static_cast<DType>(in.type().tensor_type().elem_type());
    if (drawn.count(in.name()) && in.type().has_tensor_type() && is_integer(t)) integer[in.name()] = t;
  }
  std::map<std::string, InputRule> rules;
  if (integer.empty()) return rules;
  Shapes known(model, shapes);
  const int64_t opset = default_opset(model.proto);
  for (const auto& node : model.proto.graph().node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string& name = node.input(i);
      if (!integer.count(name)) continue;
      const Site at{node, name, drawn.at(name), op_version_at(node.op_type(), opset), known, given, model};
      auto r = rule_of(at, i);
      if (!r) continue;
      const auto it = rules.find(name);
      if (it == rules.end()) rules.emplace(name, std::move(*r));
      else it->second = intersect(name, it->second, *r);
    }
  }
  return rules;
}

}  // namespace bnorm
