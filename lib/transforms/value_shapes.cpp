// inspect --shapes: the rows of value_shapes.h, from ONNX's inference and then
// bnorm's (model/shape_infer) on its result, in graph order.
#include "transforms/value_shapes.h"

#include <fmt/format.h>

#include <set>

#include "model/infer.h"
#include "model/tensor.h"
#include "model/shape_infer/shape_infer.h"

namespace bnorm {

std::string ValueShape::text() const {
  return dims ? fmt::format("{}[{}]", type, fmt::join(*dims, ",")) : type + "[rank ?]";
}

std::vector<ValueShape> value_shapes(const Model& model) {
  const onnx::ModelProto inferred = with_inferred_shapes(model.proto);  // ONNX's; bnorm's fills the rest below
  const ModelShapes shapes = infer_model_shapes(inferred);
  std::vector<ValueShape> rows;
  for_each_graph(inferred.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    const auto found = shapes.find(&g);
    if (found == shapes.end()) return;
    std::set<std::string> initializers;
    for (const auto& t : g.initializer()) initializers.insert(t.name());
    std::vector<std::string> names;
    for (const auto& i : g.input())
      if (!initializers.count(i.name())) names.push_back(i.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output())
        if (!o.empty()) names.push_back(o);
    for (const auto& name : names) {
      ValueShape r{path, name, "?", std::nullopt};
      if (auto it = found->second.find(name); it != found->second.end()) {
        const InferredValue& v = it->second;
        if (v.elem) r.type = dtype_name(static_cast<DType>(v.elem));
        if (v.shape) {
          r.dims.emplace();
          for (const auto& d : *v.shape) r.dims->push_back(d.known() ? std::to_string(d.value) : d.param.empty() ? "?" : d.param);
        }
      }
      rows.push_back(std::move(r));
    }
  });
  return rows;
}

}  // namespace bnorm
