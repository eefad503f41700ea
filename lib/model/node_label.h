// A stable label for every node, for messages, reports and JSON: its name
// when it has one; otherwise its op type, its index in its graph and its
// first output, `BatchNormalization #12 -> '462'`. Nodes of subgraphs are
// prefixed with the path of graphs that holds them ("loop/body/").
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace bnorm {

std::string node_label(const onnx::NodeProto& n, int index, const std::string& graph_path = "");

// Without the index (where the caller has none): `BatchNormalization -> '462'`.
// Output names are unique in a graph, so this still tells nodes apart.
std::string node_label(const onnx::NodeProto& n);

inline std::string node_label(const onnx::GraphProto& g, int index, const std::string& graph_path = "") {
  return node_label(g.node(index), index, graph_path);
}

}  // namespace bnorm
