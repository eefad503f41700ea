// The order nodes must run in: what each node reads (its inputs and the
// outer-scope values its subgraphs use), and a topological order.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace bnorm {

// Every distinct value `n` reads, the values its subgraphs (If/Loop/Scan
// bodies, at any depth) take from enclosing scopes included; sorted.
std::vector<std::string> node_reads(const onnx::NodeProto& n);

// Node indices of `g` in a topological order, by Kahn's algorithm always
// taking the earliest ready node, so that a sorted graph keeps its order.
// `reads[i]` are node i's reads (node_reads); values no node of `g`
// produces are taken as given. Error(input) naming a node on a cycle.
std::vector<int> topological_order(const onnx::GraphProto& g, const std::vector<std::vector<std::string>>& reads);

// True when the nodes of `g` are already in a topological order.
bool is_topologically_sorted(const onnx::GraphProto& g);

// Reorders the nodes of `g` and of its subgraphs topologically (stable for
// sorted graphs); returns how many graphs changed.
int sort_topologically(onnx::GraphProto& g);

}  // namespace bnorm
