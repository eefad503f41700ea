// How the executor runs one graph (evaluator.cpp): the order of its nodes,
// what each reads, how many nodes read each value (a value is freed after
// its last reader), which normalization nodes run fused with the
// activation that follows them, which Conv nodes apply the
// BatchNormalization, residual Add, activation or SiLU after them as they
// compute, and which
// inputs die at a node (and may be written in place by its op,
// OpContext::donated).
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "eval/run/scope.h"

namespace bnorm::eval {

struct Plan {
  std::vector<int> order;                          // topological
  std::vector<std::vector<std::string>> reads;     // by node: every value it reads, subgraphs' included
  std::unordered_map<std::string, int> uses;       // by value: how many nodes read it
  std::vector<int> fused_with;                     // by node: the activation node it runs with, or -1
  // By Conv node: the BatchNormalization node that reads its output (and
  // nothing else does), applied as the Conv computes, with that node's own
  // activation (fused_with) after it; or -1. A Conv followed directly by an
  // activation has it in fused_with.
  std::vector<int> norm_after;
  // By Conv node: the Add that reads its output, or its BatchNormalization's
  // (and nothing else does), with another value: the residual of a ResNet
  // block, added as the Conv computes when it has Y's shape; and the
  // activation after that Add (or -1).
  std::vector<int> add_after, add_act;
  // fused_with also holds the activation after a Gemm or MatMul, and
  // silu_sigmoid/silu_mul the SiLU after one.
  // By Conv (Gemm, MatMul) node: a SiLU written out after its output (or
  // its BatchNormalization's), s = Sigmoid(y) and Mul(y, s) in either
  // order, y and s read by nothing else: the Sigmoid and the Mul nodes, or
  // -1.
  std::vector<int> silu_sigmoid, silu_mul;
};

// Plans `g` in `env` (which holds its inputs and outer values); `pinned`
// values (the graph's wanted outputs) are never fused away. With `fuse`
// off (an observer wants every value), no node is fused. Error(input) at
// the node when an input names no value.
Plan plan_graph(const onnx::GraphProto& g, const Env& env, const std::set<std::string>& pinned, bool fuse);

// Nodes of `g`, in plan order, whose every input is constant: one of
// `constants` (initializers) or an output of another such node (an
// EvalCache keeps their outputs). Nodes with subgraphs are left out: their
// bodies may read anything.
std::vector<bool> constant_nodes(const onnx::GraphProto& g, const Plan& p, std::set<std::string> constants);

// By position, node `n`'s inputs whose value dies at it: held in `env`
// itself (not an outer scope), a tensor, not pinned, read by no later node
// (`uses`: readers still to run, n included) and read once by n, which has
// no subgraph. nullptr elsewhere.
std::vector<Tensor*> dying_inputs(const onnx::NodeProto& n, Env& env, const std::unordered_map<std::string, int>& uses,
                                  const std::set<std::string>& pinned);

}  // namespace bnorm::eval
