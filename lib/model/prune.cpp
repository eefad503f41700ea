#include "model/prune.h"

#include <algorithm>

#include "model/model.h"

namespace bnorm {

namespace {

template <typename Repeated, typename Pred>
void erase_if(Repeated& r, Pred pred) {
  r.erase(std::remove_if(r.begin(), r.end(), pred), r.end());
}

// A default-domain node without subgraphs whose every output is `gone`
// (or empty): it computes nothing anyone reads.
bool computes_only(const onnx::NodeProto& n, const std::set<std::string>& gone) {
  if (!(n.domain().empty() || n.domain() == "ai.onnx") || n.output_size() == 0) return false;
  for (const auto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return false;
  bool any = false;
  for (const auto& o : n.output()) {
    if (o.empty()) continue;
    if (!gone.count(o)) return false;
    any = true;
  }
  return any;
}

}  // namespace

std::set<std::string> names_in_use(const onnx::ModelProto& m) {
  std::set<std::string> used;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node())
      for (const auto& i : n.input()) used.insert(i);
    for (const auto& o : g.output()) used.insert(o.name());
  });
  return used;
}

std::set<std::string> names_defined(const onnx::ModelProto& m) {
  std::set<std::string> defined;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.input()) defined.insert(v.name());
    for (const auto& t : g.initializer()) defined.insert(t.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output()) defined.insert(o);
  });
  return defined;
}

void remove_released(onnx::ModelProto& m, std::set<std::string> released) {
  while (!released.empty()) {
    const std::set<std::string> used = names_in_use(m);
    std::set<std::string> gone;
    for (const auto& n : released)
      if (!used.count(n)) gone.insert(n);
    released.clear();
    if (gone.empty()) return;
    for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
      std::set<std::string> here;
      for (const auto& t : g.initializer())
        if (gone.count(t.name())) here.insert(t.name());
      erase_if(*g.mutable_initializer(), [&](const onnx::TensorProto& t) { return here.count(t.name()) > 0; });
      erase_if(*g.mutable_input(), [&](const onnx::ValueInfoProto& v) { return here.count(v.name()) > 0; });
      erase_if(*g.mutable_node(), [&](const onnx::NodeProto& n) {
        if (!computes_only(n, gone)) return false;
        for (const auto& i : n.input()) released.insert(i);
        return true;
      });
    });
  }
}

}  // namespace bnorm
