// Identical nodes as one (match.h, Copies): which nodes of a graph are
// copies of one another, the graph queries' view of them, and the copies
// a fusion removes with the nodes it names.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "model/tensor_proto.h"
#include "transforms/fuse/match.h"

namespace bnorm::fuse {

namespace {

// The ops the decompositions are made of: only their copies are one value (none is random or stateful).
bool copyable(const onnx::NodeProto& n) {
  static const std::set<std::string> ops{"Add", "Cast", "Div", "Mul", "Pow", "Reciprocal", "ReduceMean", "Reshape",
                                         "Shape", "Sqrt", "Sub"};
  return is_op(n, "") && n.output_size() == 1 && ops.count(n.op_type());
}

// `s` as one piece of a key: its length, then itself.
std::string piece(const std::string& s) { return fmt::format("{}:{}", s.size(), s); }

// A constant of at most 16 elements as a key piece (its type, dims and bytes): two such
// constants alike are one input; "" for any other value.
std::string constant_key(const GraphIndex& index, const GraphIndex::Scope& scope, const std::string& v,
                         const std::filesystem::path& dir) {
  const auto c = index.constant(scope, v);
  if (!c) return "";
  int64_t n = 1;
  for (int64_t d : c->tensor->dims()) {
    if (d < 0 || d > 16) return "";
    n *= d;
  }
  if (n > 16) return "";
  const Tensor t = decode_tensor(*c->tensor, dir);
  if (dtype_size(t.dtype) == 0) return "";
  return piece(fmt::format("={} {} {}", static_cast<int>(t.dtype), ints_text(t.dims),
                           std::string(t.bytes.begin(), t.bytes.end())));
}

}  // namespace

Copies find_copies(const GraphIndex& index, const GraphIndex::Scope& scope, const std::filesystem::path& dir) {
  Copies c;
  std::unordered_map<std::string, const onnx::NodeProto*> seen;  // key -> the first copy
  auto input_key = [&](const std::string& v) {
    if (const auto it = c.first.find(v); it != c.first.end()) return piece("v" + it->second);
    if (auto k = constant_key(index, scope, v, dir); !k.empty()) return k;
    return piece("v" + v);
  };
  std::vector<const onnx::NodeProto*> firsts;
  for (const auto& n : scope.graph->node()) {
    if (!copyable(n)) continue;
    std::string key = piece(n.op_type());
    for (const auto& in : n.input()) key += input_key(in);
    std::vector<std::string> attrs;
    for (const auto& a : n.attribute()) attrs.push_back(a.SerializeAsString());
    std::sort(attrs.begin(), attrs.end());
    for (const auto& a : attrs) key += piece(a);
    const auto [it, fresh] = seen.emplace(key, &n);
    if (fresh) continue;
    const onnx::NodeProto* first = it->second;
    auto& members = c.nodes[first];
    if (members.empty()) {
      firsts.push_back(first);
      members.push_back(first);
      c.values[first->output(0)].push_back(first->output(0));
      c.first[first->output(0)] = first->output(0);
    }
    members.push_back(&n);
    c.values[first->output(0)].push_back(n.output(0));
    c.first[n.output(0)] = first->output(0);
  }
  for (const auto* first : firsts) {
    const auto members = c.nodes.at(first);
    for (const auto* m : members) c.nodes[m] = members;
  }
  return c;
}

bool Graph::same(const std::string& a, const std::string& b) const {
  if (a == b) return true;
  if (!copies) return false;
  const auto fa = copies->first.find(a), fb = copies->first.find(b);
  return fa != copies->first.end() && fb != copies->first.end() && fa->second == fb->second;
}

std::vector<std::string> Graph::names_of(const std::string& v) const {
  if (copies) {
    if (const auto it = copies->first.find(v); it != copies->first.end()) return copies->values.at(it->second);
  }
  return {v};
}

std::vector<const onnx::NodeProto*> Graph::copies_of(const onnx::NodeProto* n) const {
  if (copies) {
    if (const auto it = copies->nodes.find(n); it != copies->nodes.end()) return it->second;
  }
  return {n};
}

std::string Graph::with_copies(Fusion& f) const {
  std::vector<const onnx::NodeProto*> all;
  for (const auto* n : f.nodes) {
    if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
    for (const auto* c : copies_of(n))
      if (std::find(all.begin(), all.end(), c) == all.end()) all.push_back(c);
  }
  for (const auto& in : f.node.input()) {
    const onnx::NodeProto* p = in.empty() ? nullptr : producer(in);
    if (p && std::find(all.begin(), all.end(), p) != all.end()) {
      return fmt::format("the fused node would read '{}', which the decomposition makes", in);
    }
  }
  const std::set<std::string> made(f.node.output().begin(), f.node.output().end());
  for (const auto* n : all) {
    for (const auto& o : n->output()) {
      const GraphIndex::Value* val = o.empty() || made.count(o) ? nullptr : index->find(*scope, o);
      if (!val) continue;
      const bool outside = val->graph_output || std::any_of(val->uses.begin(), val->uses.end(), [&](const auto& u) {
                             return std::find(all.begin(), all.end(), u.node) == all.end();
                           });
      if (outside) return fmt::format("'{}' (made by {} '{}') is read outside the decomposition", o, n->op_type(), n->name());
    }
  }
  f.nodes = std::move(all);
  return "";
}

}  // namespace bnorm::fuse
