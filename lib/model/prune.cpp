#include "model/prune.h"

#include <algorithm>

#include "model/model.h"

namespace bnorm {

namespace {

template <typename Repeated, typename Pred>
void erase_if(Repeated& r, Pred pred) {
  r.erase(std::remove_if(r.begin(), r.end(), pred), r.end());
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
        const bool maker = n.op_type() == "Constant" || n.op_type() == "Identity" || n.op_type() == "ConstantOfShape";
        if (!maker || n.output_size() != 1 || !gone.count(n.output(0))) return false;
        for (const auto& i : n.input()) released.insert(i);
        return true;
      });
    });
  }
}

}  // namespace bnorm
