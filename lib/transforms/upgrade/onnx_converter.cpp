#include "transforms/upgrade/onnx_converter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "core/error.h"
#include "model/model.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/onnx_guards.h"
#include "transforms/upgrade/steps/step.h"
#include "model/graph_index.h"
#include "model/op_versions.h"
#include "transforms/upgrade/types.h"
#include "transforms/upgrade/schema.h"
#include "transforms/upgrade/versions.h"

namespace bnorm::upgrade_detail {

namespace {

constexpr const char* kPlaceholderDomain = "bnorm.upgrade.placeholder";
constexpr const char* kIdAttr = "bnorm_placeholder_id";

// Ops ONNX removed: ONNX 1.5 (opset 10) dropped its experimental ops.
struct RemovedOp {
  const char* op;
  int64_t last_opset;
};
constexpr RemovedOp kRemoved[] = {
    {"ATen", 9},           {"Affine", 9},           {"ConstantFill", 9}, {"Crop", 9},
    {"DynamicSlice", 9},   {"GRUUnit", 9},          {"GivenTensorFill", 9}, {"ImageScaler", 9},
    {"ParametricSoftplus", 9}, {"Scale", 9},        {"ScaledTanh", 9},
};

const RemovedOp* removed_op(const std::string& op) {
  for (const auto& r : kRemoved) {
    if (op == r.op) return &r;
  }
  return nullptr;
}

// The first opset at which the default domain has `op`.
int first_opset(const std::string& op) {
  int first = 0;
  for (const auto& sch : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (sch.Name() == op && is_default_domain(sch.domain()) && (first == 0 || sch.SinceVersion() < first)) {
      first = sch.SinceVersion();
    }
  }
  return first;
}

}  // namespace

bool converted_by_own_step(const onnx::NodeProto& n, int64_t from, int64_t to) {
  return !is_norm_node(n) && !steps::own_steps(n, from, to).empty();
}

namespace {

// An op name in ONNX's schema table that has no default-domain schema.
const std::string& placeholder_op() {
  static const std::string name = [] {
    std::vector<std::string> candidates;
    std::vector<std::string> in_default;
    for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      (is_default_domain(s.domain()) ? in_default : candidates).push_back(s.Name());
    }
    std::sort(candidates.begin(), candidates.end());
    for (const auto& c : candidates) {
      if (std::find(in_default.begin(), in_default.end(), c) == in_default.end()) return c;
    }
    throw Error(ErrorKind::unsupported, "the ONNX library has no op outside the default domain to use as a placeholder");
  }();
  return name;
}

bool attr_set(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.i() != 0) return true;
  return false;
}

bool hide_kind(const onnx::NodeProto& n, int64_t from, int64_t to, HiddenKind* kind) {
  if (!is_default_domain(n.domain())) *kind = HiddenKind::foreign;
  else if (is_norm_node(n)) *kind = HiddenKind::norm;
  else if (converted_by_own_step(n, from, to)) *kind = HiddenKind::op_step;
  else if (removed_op(n.op_type())) *kind = HiddenKind::foreign;
  else return false;
  return true;
}

std::vector<const onnx::GraphProto*> graphs_of(const onnx::ModelProto& m) {
  std::vector<const onnx::GraphProto*> out;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) { out.push_back(&g); });
  return out;
}

std::vector<onnx::GraphProto*> graphs_of(onnx::ModelProto& m) {
  std::vector<onnx::GraphProto*> out;
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) { out.push_back(&g); });
  return out;
}

}  // namespace

int64_t onnx_max_opset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return map.at("").second;
}

void check_ops(const onnx::ModelProto& model, int64_t from, int64_t to) {
  const int64_t known = onnx_max_opset();
  std::vector<Error> found;  // every blocking node; one is thrown as it is, several as one list
  std::vector<std::string> lines;
  for_each_graph(model.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (!is_default_domain(n.domain()) || is_norm_node(n)) continue;
      std::string why, hint;
      if (const RemovedOp* r = removed_op(n.op_type())) {
        if (to <= r->last_opset) continue;
        why = fmt::format("op '{}' was removed from ONNX after opset {} (it does not exist at opset {}); neither bnorm "
                          "nor ONNX's converter can convert it", n.op_type(), r->last_opset, to);
        hint = fmt::format("convert to opset {} or lower, or replace the op first", r->last_opset);
      } else if (!onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(known), "")) {
        why = fmt::format("op '{}' is not an op of the default ONNX domain known to ONNX (opsets up to {})",
                          n.op_type(), known);
      } else if (to < from && !onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(to), "") &&
                 n.op_type() != "Resize" &&  // transforms/upgrade/steps/resize_10.cpp: Upsample (-1 below 7)
                 !(n.op_type() == "ScatterElements" && to >= 9)) {  // Scatter-9 (steps/axis_11.cpp)
        why = fmt::format("op '{}' does not exist at opset {}: ONNX introduced it at opset {}", n.op_type(), to,
                          first_opset(n.op_type()));
        hint = fmt::format("convert to opset {} or later, or replace the op first", first_opset(n.op_type()));
      } else if (const auto attrs = attributes_without_equivalent(n, from, to); !attrs.empty()) {
        why = fmt::format("{}", fmt::join(attrs, "; "));
        hint = "convert to an opset where the op has the attribute, or set it to its default first";
      } else {
        continue;
      }
      Error e(ErrorKind::unsupported, why);
      e.at_node(node_label(n), n.op_type(), static_cast<int>(from)).context("in graph " + path);
      if (!hint.empty()) e.with_hint(hint);
      found.push_back(e);
      lines.push_back(fmt::format("{} ({}): {}", quoted_label(n, i, path), n.op_type(), why));
    }
  });
  if (found.size() == 1) throw found.front();
  if (found.size() > 1) {
    throw Error(ErrorKind::unsupported, fmt::format("{} nodes cannot be converted to opset {}:\n  {}", found.size(), to,
                                                    fmt::join(lines, "\n  ")));
  }
}

void check_broadcast_shapes(const onnx::ModelProto& inferred, int64_t from, int64_t to) {
  // ONNX's adapters between the legacy broadcast attributes and numpy-style
  // broadcasting need both inputs' shapes: going down, Add, Sub, Mul, Div,
  // Pow below 7 and Max, Min, Mean, Sum below 8; going up across 7, Add ...
  // Pow that carry `broadcast`, and Gemm (all three inputs).
  auto legacy_below = [](const std::string& op) -> int64_t {
    for (const char* o : {"Add", "Sub", "Mul", "Div", "Pow"})
      if (op == o) return 7;
    for (const char* o : {"Max", "Min", "Mean", "Sum"})
      if (op == o) return 8;
    return 0;
  };
  const bool up = to > from;
  auto needs_shapes = [&](const onnx::NodeProto& n) -> int64_t {
    // A node bnorm's own steps convert (compare_7, variadic_8) never meets ONNX's adapters.
    if (!is_default_domain(n.domain()) || converted_by_own_step(n, from, to)) return 0;
    if (!up) {
      const int64_t v = legacy_below(n.op_type());
      return v != 0 && to < v && from >= v ? v : 0;
    }
    if (!(from < 7 && to >= 7)) return 0;
    if (n.op_type() == "Gemm") return 7;
    return legacy_below(n.op_type()) == 7 && attr_set(n, "broadcast") ? 7 : 0;
  };
  for_each_graph(inferred.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    std::unordered_set<std::string> shaped;
    auto note = [&](const onnx::ValueInfoProto& v) {
      if (v.type().tensor_type().has_shape()) shaped.insert(v.name());
    };
    for (const auto& v : g.input()) note(v);
    for (const auto& v : g.output()) note(v);
    for (const auto& v : g.value_info()) note(v);
    for (const auto& t : g.initializer()) shaped.insert(t.name());
    for (const auto& n : g.node()) {
      const int64_t v = needs_shapes(n);
      if (v == 0) continue;
      for (const auto& in : n.input()) {
        if (in.empty() || shaped.count(in)) continue;
        const std::string why =
            up ? fmt::format("{} carries the legacy broadcast attributes below opset {}; writing it with numpy-style "
                             "broadcasting needs each input's shape", n.op_type(), v)
               : fmt::format("{} broadcasts numpy-style from opset {}; below it the legacy broadcast attributes need "
                             "each input's shape", n.op_type(), v);
        throw Error(ErrorKind::unsupported,
                    fmt::format("{}, and the shape of input '{}' is unknown (ONNX's shape inference cannot derive it)",
                                why, in))
            .at_node(node_label(n), n.op_type(), static_cast<int>(from))
            .context("in graph " + path)
            .with_hint(up ? fmt::format("convert to opset {} or lower, or give the value a static shape (value_info)", v - 1)
                          : fmt::format("convert to opset {} or later, or give the value a static shape (value_info)", v));
      }
    }
  });
}

namespace {

// Replaces each node of `work` for which `pick` gives a kind by a
// placeholder of `domain` whose id indexes the returned vector.
template <class Pick>
std::vector<Hidden> hide_where(onnx::ModelProto& work, const onnx::ModelProto* inferred, const char* domain,
                               Pick pick) {
  const auto targets = graphs_of(work);
  std::vector<const onnx::GraphProto*> originals;
  if (inferred) {
    originals = graphs_of(*inferred);
    if (originals.size() != targets.size()) throw Error(ErrorKind::input, "shape inference changed the graph structure");
  }
  std::vector<Hidden> hidden;
  // Children first: hiding a node that holds subgraphs moves them into `hidden`.
  for (size_t k = targets.size(); k-- > 0;) {
    onnx::GraphProto& g = *targets[k];
    for (int i = 0; i < g.node_size(); ++i) {
      HiddenKind kind;
      if (!pick(g.node(i), &kind)) continue;
      onnx::NodeProto* n = g.mutable_node(i);
      hidden.push_back({kind, *n, inferred ? &originals[k]->node(i) : nullptr});
      onnx::NodeProto p;
      p.set_name(n->name());
      p.set_op_type(placeholder_op());
      p.set_domain(domain);
      *p.mutable_input() = n->input();
      *p.mutable_output() = n->output();
      auto* id = p.add_attribute();
      id->set_name(kIdAttr);
      id->set_type(onnx::AttributeProto::INT);
      id->set_i(static_cast<int64_t>(hidden.size() - 1));
      *n = std::move(p);
    }
  }
  if (!hidden.empty()) {
    auto* op = work.add_opset_import();
    op->set_domain(domain);
    op->set_version(1);
  }
  return hidden;
}

const Hidden* placeholder_in(const onnx::NodeProto& n, const std::vector<Hidden>& hidden, const char* domain) {
  if (n.domain() != domain) return nullptr;
  for (const auto& a : n.attribute()) {
    if (a.name() == kIdAttr && a.i() >= 0 && a.i() < static_cast<int64_t>(hidden.size())) return &hidden[a.i()];
  }
  return nullptr;
}

void forget_domain(onnx::ModelProto& m, const char* domain) {
  auto* ops = m.mutable_opset_import();
  for (int i = ops->size() - 1; i >= 0; --i) {
    if (ops->Get(i).domain() == domain) ops->erase(ops->begin() + i);
  }
}

// Going down one opset, o -> o - 1, a default-domain node's schema either
// does not change (any), changes only in its types (hide: kept as it is),
// or changes otherwise (onnx: ONNX's adapter).
enum class Need { any, hide, onnx };

Need need_at(const onnx::NodeProto& n, int64_t o) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(o), "");
  if (!schema || schema->SinceVersion() != o) return schema ? Need::any : Need::onnx;
  return type_only_downgrade(n, o, o - 1) ? Need::hide : Need::onnx;
}

// The opsets at which a downgrade from `from` to `to` is cut into
// ConvertVersion calls: within a segment, every node is either kept as it
// is across all of its schema changes or converted by ONNX across all.
std::vector<int64_t> segment_cuts(const onnx::ModelProto& m, int64_t from, int64_t to) {
  std::vector<const onnx::NodeProto*> nodes;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node())
      if (is_default_domain(n.domain())) nodes.push_back(&n);
  });
  std::vector<int64_t> cuts{from};
  std::vector<Need> current(nodes.size(), Need::any);
  for (int64_t o = from; o > to; --o) {
    bool conflict = false;
    std::vector<Need> at(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      at[i] = need_at(*nodes[i], o);
      conflict = conflict || (at[i] != Need::any && current[i] != Need::any && at[i] != current[i]);
    }
    if (conflict) {
      cuts.push_back(o);
      std::fill(current.begin(), current.end(), Need::any);
    }
    for (size_t i = 0; i < nodes.size(); ++i)
      if (at[i] != Need::any) current[i] = at[i];
  }
  cuts.push_back(to);
  return cuts;
}

constexpr const char* kSegmentDomain = "bnorm.upgrade.placeholder.kept";

// Whether `n`'s schema changes somewhere in (lo, hi].
bool changes_between(const onnx::NodeProto& n, int64_t hi, int64_t lo) {
  for (int64_t o = hi; o > lo; --o) {
    if (need_at(n, o) != Need::any) return true;
  }
  return false;
}

// One ConvertVersion call from `hi` down to `lo` (or up), the nodes that
// only cross type-only changes kept as they are.
onnx::ModelProto convert_segment(onnx::ModelProto work, int64_t hi, int64_t lo) {
  std::vector<Hidden> kept;
  if (lo < hi) {
    kept = hide_where(work, nullptr, kSegmentDomain, [&](const onnx::NodeProto& n, HiddenKind* kind) {
      *kind = HiddenKind::foreign;
      return is_default_domain(n.domain()) && changes_between(n, hi, lo) && type_only_downgrade(n, hi, lo);
    });
  }
  onnx::ModelProto out = run_onnx_converter(work, hi, lo);
  for_each_graph_mut(*out.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
    for (auto& n : *g.mutable_node()) {
      const Hidden* h = placeholder_in(n, kept, kSegmentDomain);
      if (!h) continue;
      onnx::NodeProto original = h->original;
      *original.mutable_input() = n.input();
      *original.mutable_output() = n.output();
      // Gemm-7 dropped `broadcast` and always broadcasts C: below 7 that is broadcast = 1.
      if (original.op_type() == "Gemm" && hi >= 7 && lo < 7 && !attr_set(original, "broadcast")) {
        auto* b = original.add_attribute();
        b->set_name("broadcast");
        b->set_type(onnx::AttributeProto::INT);
        b->set_i(1);
      }
      if (original.op_type() == "Constant" && lo < 12) steps::constant_11_12_down(original);
      for (const auto& d : defaulted_attributes()) {
        if (original.op_type() == d.op && lo < d.version) steps::remove_attr(original, d.attr);  // at its default here
      }
      n = std::move(original);
    }
  });
  forget_domain(out, kSegmentDomain);
  return out;
}

}  // namespace

std::vector<Hidden> hide_nodes(onnx::ModelProto& work, const onnx::ModelProto& inferred, int64_t from, int64_t to) {
  return hide_where(work, &inferred, kPlaceholderDomain, [&](const onnx::NodeProto& n, HiddenKind* kind) {
    return hide_kind(n, from, to, kind);
  });
}

onnx::ModelProto convert_with_onnx(const onnx::ModelProto& work, int64_t from, int64_t to) {
  if (to >= from) return run_onnx_converter(work, from, to);
  const std::vector<int64_t> cuts = segment_cuts(work, from, to);
  onnx::ModelProto out = work;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) out = convert_segment(std::move(out), cuts[i], cuts[i + 1]);
  return out;
}

const Hidden* placeholder_of(const onnx::NodeProto& n, const std::vector<Hidden>& hidden) {
  return placeholder_in(n, hidden, kPlaceholderDomain);
}

void forget_placeholder_domain(onnx::ModelProto& m) { forget_domain(m, kPlaceholderDomain); }

}  // namespace bnorm::upgrade_detail
