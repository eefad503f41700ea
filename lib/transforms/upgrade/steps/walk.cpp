#include "transforms/upgrade/steps/walk.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "model/graph_index.h"
#include "model/shape_infer/shape_infer.h"
#include "model/model.h"
#include "model/tensor_proto.h"

namespace bnorm::steps {

void walk_sites(onnx::ModelProto& m, int64_t target_opset,
                const std::function<bool(const onnx::NodeProto&, int& version)>& select,
                const std::function<Visit(NormSite& site, const WalkedNode& where)>& visit) {
  const onnx::ModelProto inferred = with_all_inferred_shapes(m);
  const GraphIndex index(inferred);
  std::vector<const onnx::GraphProto*> originals;
  for_each_graph(inferred.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) { originals.push_back(&g); });
  Env env;
  env.index = &index;
  collect_names(m, env);
  size_t k = 0;
  // Subgraphs of nodes a visit wrote (a lowering's Scan body): not in `inferred`, not walked (they are
  // written at the model's opset; later passes convert them with every other graph).
  std::unordered_set<const onnx::GraphProto*> written;
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    if (written.count(&g)) return;
    const onnx::GraphProto& orig = *originals.at(k++);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    std::vector<int> added;  // positions in `nodes` of the nodes visits wrote
    for (int i = 0; i < g.node_size(); ++i) {
      onnx::NodeProto& n = *g.mutable_node(i);
      int version = 0;
      if (!select(n, version)) {
        *nodes.Add() = std::move(n);
        continue;
      }
      NormSite s;
      s.node = n;
      s.version = version;
      s.target_opset = target_opset;
      s.scope = &index.scope_of(&orig.node(i));
      s.env = &env;
      const Visit what = visit(s, WalkedNode{g, path, i});
      if (what == Visit::keep) {
        *nodes.Add() = std::move(n);
        continue;
      }
      for (auto& b : s.before) {
        added.push_back(nodes.size());
        *nodes.Add() = std::move(b);
      }
      if (what == Visit::splice) *nodes.Add() = std::move(s.node);
      for (auto& a : s.after) {
        added.push_back(nodes.size());
        *nodes.Add() = std::move(a);
      }
      for (auto& t : s.initializers) {
        // Below IR 4 every initializer of the main graph is a graph input too
        // (shape inference ignores one that is not: everything after it unknown).
        const bool listed = std::any_of(g.input().begin(), g.input().end(),
                                        [&](const onnx::ValueInfoProto& v) { return v.name() == t.name(); });
        if (m.ir_version() < 4 && path == "main" && !listed) add_tensor_input(g, t.name(), t.data_type(), t.dims());
        *g.add_initializer() = std::move(t);
      }
    }
    g.mutable_node()->Swap(&nodes);
    for (int i : added) {
      for (auto& a : *g.mutable_node(i)->mutable_attribute()) {
        std::vector<onnx::GraphProto*> subs;
        if (a.has_g()) subs.push_back(a.mutable_g());
        for (auto& sg : *a.mutable_graphs()) subs.push_back(&sg);
        for (auto* sg : subs) {
          for_each_graph(*sg, "", [&](const onnx::GraphProto& x, const std::string&) { written.insert(&x); });
        }
      }
    }
  });
}

}  // namespace bnorm::steps
