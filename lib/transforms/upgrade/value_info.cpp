// Types for values that ONNX's shape inference cannot derive in the
// converted model, so that the strict check (full shape inference) can
// follow the graph through them.
//
//   Before: X -> Relu-1 -> r (no type: Relu-1 has no inference function)
//           r -> MaxPool -> ...   strict inference fails at MaxPool
//   After:  value_info r: the type (and shape) r had in the input model,
//           shape-inferred; for a value the conversion made, the element
//           type of the node's first input (Cast-1: its `to`).
//
// Only outputs of nodes whose schema at the target opset has no type
// inference function (in ONNX 1.12: most version-1 schemas, opsets 1-5)
// are declared. Values keep their names and meaning across the
// conversion, so the input model's types hold for them.
#include "transforms/upgrade/value_info.h"

#include <onnx/defs/schema.h>

#include <map>
#include <optional>
#include <string>

#include "model/infer.h"
#include "model/model.h"
#include "model/norm_op.h"

namespace bnorm::upgrade_detail {

namespace {

using TypeMap = std::map<std::string, onnx::ValueInfoProto>;

// Every value with a known element type, per graph path.
std::map<std::string, TypeMap> typed_values(const onnx::ModelProto& m) {
  std::map<std::string, TypeMap> out;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    TypeMap& types = out[path];
    auto add = [&](const onnx::ValueInfoProto& v) {
      if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) types.emplace(v.name(), v);
    };
    for (const auto& v : g.input()) add(v);
    for (const auto& v : g.output()) add(v);
    for (const auto& v : g.value_info()) add(v);
    for (const auto& t : g.initializer()) {
      onnx::ValueInfoProto v;
      v.set_name(t.name());
      auto* tt = v.mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
      types.emplace(t.name(), v);
    }
  });
  return out;
}

bool lacks_inference(const onnx::NodeProto& n, int64_t opset) {
  if (!is_default_domain(n.domain())) return false;
  const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
  return schema && !schema->has_type_and_shape_inference_function();
}

std::optional<onnx::ValueInfoProto> fallback_type(const onnx::NodeProto& n, const std::string& out, const TypeMap& known) {
  int32_t elem = 0;
  if (n.op_type() == "Cast") {
    for (const auto& a : n.attribute()) {
      if (a.name() != "to") continue;
      onnx::TensorProto::DataType t;
      if (a.type() == onnx::AttributeProto::INT) elem = static_cast<int32_t>(a.i());
      else if (onnx::TensorProto::DataType_Parse(a.s(), &t)) elem = t;
    }
  } else if (n.input_size() > 0) {
    if (auto it = known.find(n.input(0)); it != known.end()) elem = it->second.type().tensor_type().elem_type();
  }
  if (elem == 0) return std::nullopt;
  onnx::ValueInfoProto v;
  v.set_name(out);
  v.mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  return v;
}

// One pass over the graphs in node order; true when it declared something.
bool declare_pass(onnx::ModelProto& out, const std::map<std::string, TypeMap>& before, int64_t opset) {
  std::map<std::string, TypeMap> now = typed_values(with_inferred_shapes(out));
  bool changed = false;
  for_each_graph_mut(*out.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    TypeMap& known = now[path];
    const auto source = before.find(path);
    for (const auto& n : g.node()) {
      if (!lacks_inference(n, opset)) continue;
      for (const auto& o : n.output()) {
        if (o.empty() || known.count(o)) continue;
        std::optional<onnx::ValueInfoProto> v;
        if (source != before.end()) {
          if (auto it = source->second.find(o); it != source->second.end()) v = it->second;
        }
        if (!v) v = fallback_type(n, o, known);
        if (!v) continue;
        *g.add_value_info() = *v;
        known.emplace(o, *v);
        changed = true;
      }
    }
  });
  return changed;
}

}  // namespace

void declare_uninferred_types(onnx::ModelProto& out, const onnx::ModelProto& inferred_input, int64_t opset) {
  bool any = false;
  for_each_graph(out.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node()) any = any || lacks_inference(n, opset);
  });
  if (!any) return;
  const auto before = typed_values(inferred_input);
  // Each pass can let inference reach further; a graph of N nodes needs at most N.
  for (int pass = 0; pass < 64 && declare_pass(out, before, opset); ++pass) {
  }
}

}  // namespace bnorm::upgrade_detail
