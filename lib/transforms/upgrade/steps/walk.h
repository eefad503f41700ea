// The one site walker of upgrade's passes (lowering, bfloat16 casts, the
// conversion above opset 17): shapes inferred once, one index, every graph
// of the model walked (subgraphs too), each node a pass selects made a
// NormSite, and what the pass's visit says done: the node kept as it was;
// the site spliced in its place (the nodes before it, the node, the nodes
// after it); or the node replaced by the site's other nodes (lowering). The
// site's initializers go to the graph (below IR 4 a main-graph initializer
// is listed as a graph input too, as that IR requires).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

enum class Visit { keep, splice, replace };

struct WalkedNode {
  onnx::GraphProto& graph;
  const std::string& path;  // "main", or the subgraph's path
  int index;                // the node's position in the graph as it was
};

// `select(node, version)` says whether a node is a site and gives its schema
// version now; `visit(site, where)` does the pass's work on the site (its
// node a copy) and says what becomes of the node.
void walk_sites(onnx::ModelProto& m, int64_t target_opset,
                const std::function<bool(const onnx::NodeProto&, int& version)>& select,
                const std::function<Visit(NormSite& site, const WalkedNode& where)>& visit);

}  // namespace bnorm::steps
