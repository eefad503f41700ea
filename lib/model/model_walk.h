// Walkers over every graph and tensor of a model, subgraphs included.
// Included by model.h; not meant to be included alone.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace bnorm {

// The path of a subgraph held by attribute `attr` of `node` inside `parent`:
// "main/if1.then_branch", "main/loop.body", "main/n.graphs[1]".
inline std::string subgraph_path(const std::string& parent, const onnx::NodeProto& node, const std::string& attr,
                                 int index = -1) {
  std::string p = parent + "/" + (node.name().empty() ? node.op_type() : node.name()) + "." + attr;
  if (index >= 0) p += "[" + std::to_string(index) + "]";
  return p;
}

// Calls f(graph, path) for `g` and every subgraph below it, parents first.
template <typename F>
void for_each_graph(const onnx::GraphProto& g, const std::string& path, F&& f) {
  f(g, path);
  for (const auto& node : g.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) for_each_graph(attr.g(), subgraph_path(path, node, attr.name()), f);
      for (int i = 0; i < attr.graphs_size(); ++i) {
        for_each_graph(attr.graphs(i), subgraph_path(path, node, attr.name(), i), f);
      }
    }
  }
}

// The same over a mutable graph.
template <typename F>
void for_each_graph_mut(onnx::GraphProto& g, const std::string& path, F&& f) {
  f(g, path);
  for (auto& node : *g.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_graph_mut(*attr.mutable_g(), subgraph_path(path, node, attr.name()), f);
      for (int i = 0; i < attr.graphs_size(); ++i) {
        for_each_graph_mut(*attr.mutable_graphs(i), subgraph_path(path, node, attr.name(), i), f);
      }
    }
  }
}

template <typename F>
void for_each_tensor(onnx::ModelProto& m, F&& f) {
  auto visit_nodes = [&](auto& nodes) {
    for (auto& node : nodes) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.has_t()) f(*attr.mutable_t());
        for (auto& t : *attr.mutable_tensors()) f(t);
      }
    }
  };
  if (m.has_graph()) {
    for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
      for (auto& t : *g.mutable_initializer()) f(t);
      for (auto& s : *g.mutable_sparse_initializer()) f(*s.mutable_values());
      visit_nodes(*g.mutable_node());
    });
  }
  for (auto& fn : *m.mutable_functions()) visit_nodes(*fn.mutable_node());
}

}  // namespace bnorm
