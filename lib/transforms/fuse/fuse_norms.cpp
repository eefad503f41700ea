// upgrade --fuse-norms (fuse_norms.h): finds every decomposition in every
// graph (GroupNormalization first, whose inner standardization would
// otherwise read as a LayerNormalization, then LayerNormalization, then
// RMSNormalization), then rewrites: each decomposition's nodes are removed
// and the fused node takes the place of its last one (the graph re-sorted
// when a reader of an optional output came before it), and the constants
// nothing reads any more are removed.
#include "transforms/fuse/fuse_norms.h"
#include "transforms/upgrade/steps/step.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>

#include "model/graph_index.h"
#include "model/graph_order.h"
#include "model/infer.h"
#include "model/model.h"
#include "model/node_label.h"
#include "model/op_versions.h"
#include "model/prune.h"
#include "transforms/fuse/match.h"

namespace bnorm {

namespace {

struct Planned {
  std::vector<int> indices;  // of the removed nodes in their graph
  fuse::Fusion fusion;
};


// "/ln/ReduceMean", "/ln/Sub", ... -> "/ln/LayerNormalization"; the op alone when the names share no path.
std::string stem_of(const fuse::Fusion& f, const std::string& op) {
  std::string prefix;
  bool first = true;
  for (const auto* n : f.nodes) {
    if (first) {
      prefix = n->name();
      first = false;
      continue;
    }
    size_t k = 0;
    while (k < prefix.size() && k < n->name().size() && prefix[k] == n->name()[k]) ++k;
    prefix.resize(k);
  }
  const size_t slash = prefix.find_last_of('/');
  return slash == std::string::npos ? op : prefix.substr(0, slash + 1) + op;
}

// Of `names`, those that are initializers or Constant outputs in `m`.
std::set<std::string> constants_of(const onnx::ModelProto& m, const std::set<std::string>& names) {
  std::set<std::string> out;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& t : g.initializer())
      if (names.count(t.name())) out.insert(t.name());
    for (const auto& n : g.node())
      if (n.op_type() == "Constant" && n.output_size() == 1 && names.count(n.output(0))) out.insert(n.output(0));
  });
  return out;
}

}  // namespace

void fuse_norms(onnx::ModelProto& m, const std::filesystem::path& dir, UpgradeReport& r) {
  const int64_t opset = default_opset(m);
  if (opset < 17) {
    r.warnings.push_back(fmt::format("--fuse-norms: opset {} has none of the fused ops (LayerNormalization from 17, "
                                     "GroupNormalization from 18, RMSNormalization from 23): nothing is fused", opset));
  }
  const onnx::ModelProto inferred = with_inferred_shapes(m);
  const GraphIndex index(inferred);
  std::unordered_set<std::string> names;
  {
    steps::Env env;
    steps::collect_names(m, env);
    names = std::move(env.names);
  }

  // By graph: two subgraphs can share a path (unnamed If nodes), never a GraphProto.
  std::map<const onnx::GraphProto*, std::vector<Planned>> plans;
  for (const auto& scope : index.scopes()) {
    const onnx::GraphProto& gp = *scope->graph;
    std::unordered_map<const onnx::NodeProto*, int> position;
    for (int i = 0; i < gp.node_size(); ++i) position[&gp.node(i)] = i;
    std::unordered_set<const onnx::NodeProto*> claimed;
    const fuse::Copies copies = fuse::find_copies(index, *scope, dir);
    fuse::Graph g{&index, scope.get(), opset, dir, &claimed, &names, &copies};
    const std::string prefix = scope->path == "main" ? "" : scope->path + "/";

    auto consider = [&](std::optional<fuse::Candidate> c) {
      if (!c) return;
      if (c->fusion) {
        c->why = g.with_copies(*c->fusion);
        if (!c->why.empty()) c->fusion.reset();
      }
      if (c->fusion) {
        for (const auto* n : c->fusion->nodes)
          if (claimed.count(n)) return;  // part of a decomposition already fused
        if (c->since > opset) {
          c->why = fmt::format("{} exists from opset {}; the target is {}", c->op, c->since, opset);
          c->fusion.reset();
        }
      }
      if (!c->fusion) {
        r.not_fused.push_back({scope->path, node_label(*c->anchor, position.at(c->anchor), prefix), c->op, c->why});
        return;
      }
      Planned p;
      for (const auto* n : c->fusion->nodes) {
        claimed.insert(n);
        p.indices.push_back(position.at(n));
      }
      p.fusion = std::move(*c->fusion);
      p.fusion.node.set_name(g.fresh(stem_of(p.fusion, c->op)));
      plans[scope->graph].push_back(std::move(p));
    };
    const char* anchors[] = {"Reshape", "ReduceMean", "ReduceMean"};
    for (int pass = 0; pass < 3; ++pass) {
      for (int i = 0; i < gp.node_size(); ++i) {
        const onnx::NodeProto& n = gp.node(i);
        if (n.op_type() != anchors[pass] || !is_default_domain(n.domain()) || claimed.count(&n)) continue;
        if (pass == 0) consider(fuse::match_groupnorm(g, n));
        if (pass == 1) consider(fuse::match_layernorm(g, n));
        if (pass == 2) consider(fuse::match_rmsnorm(g, n));
      }
    }
  }
  if (plans.empty()) return;

  std::set<std::string> released;
  std::vector<const onnx::GraphProto*> planned_graphs;  // inferred's graphs, in the order m's are visited
  for_each_graph(inferred.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) { planned_graphs.push_back(&g); });
  size_t visited = 0;
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    auto it = plans.find(planned_graphs.at(visited++));
    if (it == plans.end()) return;
    std::map<int, const Planned*> at;  // the last removed node's index -> its fusion
    std::set<int> removed;
    std::set<std::string> gone;  // values the removed nodes made that the fused ones do not
    for (const auto& p : it->second) {
      at[*std::max_element(p.indices.begin(), p.indices.end())] = &p;
      removed.insert(p.indices.begin(), p.indices.end());
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < g.node_size(); ++i) {
      if (!removed.count(i)) {
        *nodes.Add() = std::move(*g.mutable_node(i));
        continue;
      }
      for (const auto& in : g.node(i).input()) released.insert(in);
      for (const auto& out : g.node(i).output()) gone.insert(out);
      if (!at.count(i)) continue;
      const Planned& p = *at.at(i);
      *nodes.Add() = p.fusion.node;
      for (const auto& t : p.fusion.initializers) *g.add_initializer() = t;
      std::vector<std::string> added;
      for (const auto& t : p.fusion.initializers) added.push_back(t.name());
      r.rewrites.push_back({path, p.fusion.node.name(), p.fusion.node.op_type(),
                            fmt::format("fused {} into {} ({})", fuse::op_list(p.fusion.nodes),
                                        p.fusion.node.op_type(), p.fusion.detail),
                            added, node_label(p.fusion.node)});
    }
    for (const auto& n : nodes)
      for (const auto& out : n.output()) gone.erase(out);
    g.mutable_node()->Swap(&nodes);
    auto* vi = g.mutable_value_info();
    for (int i = vi->size() - 1; i >= 0; --i)
      if (gone.count(vi->Get(i).name())) vi->erase(vi->begin() + i);
    if (!is_topologically_sorted(g)) sort_topologically(g);
  });
  const std::set<std::string> before = constants_of(m, released);
  remove_released(m, released);
  const std::set<std::string> after = constants_of(m, released);
  for (const auto& c : before)
    if (!after.count(c)) r.removed.push_back(c);
}

}  // namespace bnorm
