#include "model/graph_order.h"

#include <fmt/format.h>

#include <functional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "model/model.h"
#include "model/node_label.h"

namespace bnorm {

namespace {

// Names a subgraph reads from enclosing scopes (used but not defined in it).
void free_names(const onnx::GraphProto& g, std::set<std::string>& out) {
  std::unordered_set<std::string> defined;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }
  for (const auto& n : g.node()) {
    std::set<std::string> used(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) free_names(a.g(), used);
      for (const auto& sg : a.graphs()) free_names(sg, used);
    }
    for (const auto& u : used) {
      if (!u.empty() && !defined.count(u)) out.insert(u);
    }
  }
  for (const auto& o : g.output()) {
    if (!defined.count(o.name())) out.insert(o.name());
  }
}

std::vector<std::vector<std::string>> all_reads(const onnx::GraphProto& g) {
  std::vector<std::vector<std::string>> reads;
  reads.reserve(g.node_size());
  for (const auto& n : g.node()) reads.push_back(node_reads(n));
  return reads;
}

}  // namespace

std::vector<std::string> node_reads(const onnx::NodeProto& n) {
  std::set<std::string> used;
  for (const auto& i : n.input()) {
    if (!i.empty()) used.insert(i);
  }
  for (const auto& a : n.attribute()) {
    if (a.has_g()) free_names(a.g(), used);
    for (const auto& sg : a.graphs()) free_names(sg, used);
  }
  return {used.begin(), used.end()};
}

std::vector<int> topological_order(const onnx::GraphProto& g, const std::vector<std::vector<std::string>>& reads) {
  const int count = g.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  std::vector<std::vector<int>> next(count);
  std::vector<int> indegree(count, 0);
  for (int i = 0; i < count; ++i) {
    for (const auto& r : reads[i]) {
      auto it = producer.find(r);
      if (it == producer.end()) continue;
      next[it->second].push_back(i);
      ++indegree[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i) {
    if (indegree[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(count);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int j : next[i]) {
      if (--indegree[j] == 0) ready.push(j);
    }
  }
  if (static_cast<int>(order.size()) != count) {
    for (int i = 0; i < count; ++i) {
      if (indegree[i] > 0) {
        Error e(ErrorKind::input, "the graph has a cycle through this node");
        e.at_node(node_label(g, i), g.node(i).op_type());
        throw e;
      }
    }
  }
  return order;
}

bool is_topologically_sorted(const onnx::GraphProto& g) {
  const std::vector<int> order = topological_order(g, all_reads(g));
  for (int i = 0; i < static_cast<int>(order.size()); ++i) {
    if (order[i] != i) return false;
  }
  return true;
}

int sort_topologically(onnx::GraphProto& g) {
  int changed = 0;
  for_each_graph_mut(g, "main", [&](onnx::GraphProto& sub, const std::string&) {
    const std::vector<int> order = topological_order(sub, all_reads(sub));
    bool sorted = true;
    for (int i = 0; i < static_cast<int>(order.size()); ++i) sorted = sorted && order[i] == i;
    if (sorted) return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i : order) *nodes.Add() = std::move(*sub.mutable_node(i));
    sub.mutable_node()->Swap(&nodes);
    ++changed;
  });
  return changed;
}

}  // namespace bnorm
