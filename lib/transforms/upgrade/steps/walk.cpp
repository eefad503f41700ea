#include "transforms/upgrade/steps/walk.h"

#include <algorithm>
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
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    const onnx::GraphProto& orig = *originals.at(k++);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
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
      for (auto& b : s.before) *nodes.Add() = std::move(b);
      if (what == Visit::splice) *nodes.Add() = std::move(s.node);
      for (auto& a : s.after) *nodes.Add() = std::move(a);
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
  });
}

}  // namespace bnorm::steps
