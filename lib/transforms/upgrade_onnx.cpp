#include "transforms/upgrade_onnx.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "model/model.h"
#include "model/norm_op.h"

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

}  // namespace

const std::vector<int>* type_only_versions(const std::string& op) {
  // Schema versions whose change only added element types (Reshape-14 also
  // added allowzero, whose default keeps the old meaning). Checked against
  // ONNX's schemas by tests/upgrade_type_only_test.cpp.
  static const std::map<std::string, std::vector<int>> table{
      {"Abs", {13}},      {"Add", {13, 14}},  {"Concat", {13}},   {"Div", {13, 14}},     {"Dropout", {13}},     {"Exp", {13}},
      {"Flatten", {9, 11, 13}},  {"Gemm", {7, 9, 11, 13}},     {"Identity", {13, 14, 16}}, {"LeakyRelu", {16}}, {"Log", {13}},
      {"MatMul", {13}},   {"MaxPool", {12}},  {"Mul", {13, 14}},  {"Neg", {13}},         {"Reciprocal", {13}},
      {"Relu", {13, 14}}, {"Reshape", {13, 14}}, {"Sigmoid", {13}}, {"Sqrt", {13}},      {"Sub", {13, 14}},
      {"Sum", {13}},      {"Tanh", {13}},     {"Transpose", {13}},
  };
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

namespace {

bool is_softmax_family(const std::string& op) { return op == "Softmax" || op == "LogSoftmax" || op == "Hardmax"; }

bool crosses_12_13(int64_t from, int64_t to) { return std::min(from, to) <= 12 && std::max(from, to) >= 13; }

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

// Going down across only type-only schema changes, the node stays as it is
// (ONNX 1.12 lacks adapters for several, e.g. Relu 14 -> 13). The strict
// checker run on every written model catches a type the older schema lacks.
bool type_only_downgrade(const onnx::NodeProto& n, int64_t from, int64_t to) {
  if (to >= from) return false;
  const std::vector<int>* versions = type_only_versions(n.op_type());
  if (!versions) return false;
  // Changes that are type-only for the node at hand: Reshape-14's allowzero
  // unset, Flatten-11 (negative axis) with a non-negative axis, Gemm-11
  // (optional C) with C given; Gemm-7 (C always broadcast) gets broadcast = 1
  // in hide_nodes.
  if (n.op_type() == "Reshape" && attr_set(n, "allowzero")) return false;
  if (n.op_type() == "Flatten" && to < 11) {
    for (const auto& a : n.attribute())
      if (a.name() == "axis" && a.i() < 0) return false;
  }
  if (n.op_type() == "Gemm" && to < 11 && (n.input_size() < 3 || n.input(2).empty())) return false;
  for (int64_t o = from; o > to; --o) {
    const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(o), "");
    if (!schema) return false;
    const int v = schema->SinceVersion();
    if (v <= to) break;
    if (std::find(versions->begin(), versions->end(), v) == versions->end()) return false;
  }
  return true;
}

bool hide_kind(const onnx::NodeProto& n, int64_t from, int64_t to, HiddenKind* kind) {
  if (!is_default_domain(n.domain())) *kind = HiddenKind::foreign;
  else if (is_norm_node(n)) *kind = HiddenKind::norm;
  else if (is_softmax_family(n.op_type()) && crosses_12_13(from, to)) *kind = HiddenKind::softmax;
  else if (removed_op(n.op_type())) *kind = HiddenKind::foreign;
  else if (type_only_downgrade(n, from, to)) *kind = HiddenKind::foreign;
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
  for_each_graph(model.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    for (const auto& n : g.node()) {
      if (!is_default_domain(n.domain()) || is_norm_node(n)) continue;
      if (const RemovedOp* r = removed_op(n.op_type())) {
        if (to <= r->last_opset) continue;
        throw Error(ErrorKind::unsupported,
                    fmt::format("op '{}' was removed from ONNX after opset {} (it does not exist at opset {}); "
                                "neither bnorm nor ONNX's converter can convert it", n.op_type(), r->last_opset, to))
            .at_node(n.name(), n.op_type(), static_cast<int>(from))
            .context("in graph " + path)
            .with_hint(fmt::format("convert to opset {} or lower, or replace the op first", r->last_opset));
      }
      if (!onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(known), "")) {
        throw Error(ErrorKind::unsupported,
                    fmt::format("op '{}' is not an op of the default ONNX domain known to ONNX (opsets up to {})",
                                n.op_type(), known))
            .at_node(n.name(), n.op_type(), static_cast<int>(from))
            .context("in graph " + path);
      }
    }
  });
}

std::vector<Hidden> hide_nodes(onnx::ModelProto& work, const onnx::ModelProto& inferred, int64_t from, int64_t to) {
  const std::vector<const onnx::GraphProto*> originals = graphs_of(inferred);
  const auto targets = graphs_of(work);
  if (originals.size() != targets.size()) throw Error(ErrorKind::input, "shape inference changed the graph structure");
  std::vector<Hidden> hidden;
  // Children first: hiding a node that holds subgraphs moves them into `hidden`.
  for (size_t k = targets.size(); k-- > 0;) {
    onnx::GraphProto& g = *targets[k];
    for (int i = 0; i < g.node_size(); ++i) {
      HiddenKind kind;
      if (!hide_kind(g.node(i), from, to, &kind)) continue;
      onnx::NodeProto* n = g.mutable_node(i);
      hidden.push_back({kind, *n, &originals[k]->node(i)});
      // Gemm-7 dropped `broadcast` and always broadcasts C: below 7 that is broadcast = 1.
      if (n->op_type() == "Gemm" && is_default_domain(n->domain()) && from >= 7 && to < 7 &&
          !attr_set(*n, "broadcast")) {
        auto* b = hidden.back().original.add_attribute();
        b->set_name("broadcast");
        b->set_type(onnx::AttributeProto::INT);
        b->set_i(1);
      }
      onnx::NodeProto p;
      p.set_name(n->name());
      p.set_op_type(placeholder_op());
      p.set_domain(kPlaceholderDomain);
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
    op->set_domain(kPlaceholderDomain);
    op->set_version(1);
  }
  return hidden;
}

const Hidden* placeholder_of(const onnx::NodeProto& n, const std::vector<Hidden>& hidden) {
  if (n.domain() != kPlaceholderDomain) return nullptr;
  for (const auto& a : n.attribute()) {
    if (a.name() == kIdAttr && a.i() >= 0 && a.i() < static_cast<int64_t>(hidden.size())) return &hidden[a.i()];
  }
  return nullptr;
}

void forget_placeholder_domain(onnx::ModelProto& m) {
  auto* ops = m.mutable_opset_import();
  for (int i = ops->size() - 1; i >= 0; --i) {
    if (ops->Get(i).domain() == kPlaceholderDomain) ops->erase(ops->begin() + i);
  }
}

onnx::ModelProto run_onnx_converter(const onnx::ModelProto& work, int64_t from, int64_t to) {
  try {
    return onnx::version_conversion::ConvertVersion(work, static_cast<int>(to));
  } catch (const std::exception& e) {
    throw Error(ErrorKind::unsupported,
                fmt::format("ONNX's version converter failed from opset {} to {}: {}", from, to, e.what()))
        .with_hint("the op it names has no adapter in ONNX 1.12 for this step; try another target opset");
  }
}

}  // namespace bnorm::upgrade_detail
