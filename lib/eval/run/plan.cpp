// The plan of plan.h.
#include "eval/run/plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "eval/ops/activation/activation.h"
#include "model/graph_order.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/op_versions.h"

namespace bnorm::eval {

Plan plan_graph(const onnx::GraphProto& g, const Env& env, const std::set<std::string>& pinned, bool fuse) {
  const int count = g.node_size();
  Plan p;
  p.reads.resize(count);
  p.fused_with.assign(count, -1);
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  for (int i = 0; i < count; ++i) {
    const auto& n = g.node(i);
    p.reads[i] = node_reads(n);
    for (const auto& r : p.reads[i]) {
      ++p.uses[r];
      if (!producer.count(r) && !env.has(r)) {
        Error e(ErrorKind::input, fmt::format("input '{}' names no value of the graph", r));
        e.at_node(node_label(g, i), n.op_type());
        throw e;
      }
    }
  }
  p.order = topological_order(g, p.reads);
  p.norm_after.assign(count, -1);
  p.add_after.assign(count, -1);
  p.add_act.assign(count, -1);
  p.silu_sigmoid.assign(count, -1);
  p.silu_mul.assign(count, -1);
  if (!fuse) return p;
  // The one node that reads output 0 of node i, once, when nothing else
  // reads it, it is no pinned value and that node names an output 0; else -1.
  auto only_reader = [&](int i) {
    const auto& n = g.node(i);
    if (n.output_size() == 0 || n.output(0).empty()) return -1;
    const std::string& y = n.output(0);
    if (p.uses[y] != 1 || pinned.count(y)) return -1;
    for (int j = 0; j < count; ++j) {
      if (std::find(p.reads[j].begin(), p.reads[j].end(), y) == p.reads[j].end()) continue;
      const auto& a = g.node(j);
      const bool once = std::count(a.input().begin(), a.input().end(), y) == 1;
      return once && a.output_size() > 0 && !a.output(0).empty() ? j : -1;
    }
    return -1;
  };
  // That reader when it reads the value as its input 0 (an activation's or
  // a BatchNormalization's X).
  auto sole_reader = [&](int i) {
    const int j = only_reader(i);
    return j >= 0 && g.node(j).input(0) == g.node(i).output(0) ? j : -1;
  };
  // That reader when it is an Add of two operands (a residual Add).
  auto sole_add_reader = [&](int i) {
    const int j = only_reader(i);
    const bool add = j >= 0 && g.node(j).op_type() == "Add" && is_default_domain(g.node(j).domain()) &&
                     g.node(j).input_size() == 2;
    return add ? j : -1;
  };
  // The Sigmoid s and Mul m of x * Sigmoid(x) on output 0 of node i: the
  // value read by those two nodes alone, the Sigmoid's output by the Mul
  // alone, no value pinned.
  auto silu_readers = [&](int i, int& s, int& m) {
    const auto& n = g.node(i);
    if (n.output_size() == 0 || n.output(0).empty()) return false;
    const std::string& y = n.output(0);
    if (p.uses[y] != 2 || pinned.count(y)) return false;
    int sig = -1, mul = -1;
    for (int j = 0; j < count; ++j) {
      if (std::find(p.reads[j].begin(), p.reads[j].end(), y) == p.reads[j].end()) continue;
      const auto& a = g.node(j);
      if (!is_default_domain(a.domain())) return false;
      if (a.op_type() == "Sigmoid" && a.input_size() == 1 && a.output_size() == 1 && !a.output(0).empty()) {
        sig = j;
      } else if (a.op_type() == "Mul" && a.input_size() == 2 && a.output_size() == 1 && !a.output(0).empty()) {
        mul = j;
      }
    }
    if (sig < 0 || mul < 0) return false;
    const std::string& sv = g.node(sig).output(0);
    const auto& mi = g.node(mul).input();
    const bool pair = (mi[0] == y && mi[1] == sv) || (mi[0] == sv && mi[1] == y);
    if (!pair || p.uses[sv] != 1 || pinned.count(sv)) return false;
    s = sig;
    m = mul;
    return true;
  };
  auto is_activation = [&](int j) {
    return j >= 0 && is_default_domain(g.node(j).domain()) && is_activation_op(g.node(j).op_type());
  };
  for (int i = 0; i < count; ++i) {
    if (!is_norm_node(g.node(i))) continue;
    const int j = sole_reader(i);
    if (is_activation(j)) p.fused_with[i] = j;
  }
  // Gemm and MatMul: the activation or SiLU after them.
  for (int i = 0; i < count; ++i) {
    const auto& n = g.node(i);
    if ((n.op_type() != "Gemm" && n.op_type() != "MatMul") || !is_default_domain(n.domain())) continue;
    const int j = sole_reader(i);
    if (is_activation(j)) {
      p.fused_with[i] = j;
    } else {
      silu_readers(i, p.silu_sigmoid[i], p.silu_mul[i]);
    }
  }
  for (int i = 0; i < count; ++i) {
    const auto& n = g.node(i);
    if (n.op_type() != "Conv" || !is_default_domain(n.domain())) continue;
    const int j = sole_reader(i);
    if (j >= 0 && g.node(j).op_type() == "BatchNormalization" && is_default_domain(g.node(j).domain())) {
      p.norm_after[i] = j;
    } else if (is_activation(j)) {
      p.fused_with[i] = j;
    }
    // Then a residual Add (when no activation came first), and its
    // activation; or a SiLU written out.
    const int last = p.norm_after[i] >= 0 ? p.norm_after[i] : i;
    if (p.fused_with[last] >= 0) continue;
    if (silu_readers(last, p.silu_sigmoid[i], p.silu_mul[i])) continue;
    const int add = sole_add_reader(last);
    if (add < 0) continue;
    p.add_after[i] = add;
    const int k = sole_reader(add);
    if (is_activation(k)) p.add_act[i] = k;
  }
  return p;
}

namespace {

bool has_subgraph(const onnx::NodeProto& n) {
  return std::any_of(n.attribute().begin(), n.attribute().end(),
                     [](const onnx::AttributeProto& a) { return a.has_g() || a.graphs_size() > 0; });
}

}  // namespace

std::vector<bool> constant_nodes(const onnx::GraphProto& g, const Plan& p, std::set<std::string> constants) {
  std::vector<bool> out(g.node_size(), false);
  for (int i : p.order) {
    const auto& n = g.node(i);
    if (has_subgraph(n)) continue;
    bool all = true;
    for (const auto& in : n.input()) all = all && (in.empty() || constants.count(in));
    if (!all) continue;
    out[i] = true;
    for (const auto& o : n.output()) {
      if (!o.empty()) constants.insert(o);
    }
  }
  return out;
}

std::vector<Tensor*> dying_inputs(const onnx::NodeProto& n, Env& env, const std::unordered_map<std::string, int>& uses,
                                  const std::set<std::string>& pinned) {
  std::vector<Tensor*> out(static_cast<size_t>(n.input_size()), nullptr);
  if (has_subgraph(n)) return out;
  for (int k = 0; k < n.input_size(); ++k) {
    const std::string& name = n.input(k);
    auto it = name.empty() ? env.values.end() : env.values.find(name);
    if (it == env.values.end() || !it->second.is_tensor() || pinned.count(name)) continue;
    auto u = uses.find(name);
    if (u == uses.end() || u->second != 1 || std::count(n.input().begin(), n.input().end(), name) != 1) continue;
    out[static_cast<size_t>(k)] = &it->second.tensor;
  }
  return out;
}

}  // namespace bnorm::eval
