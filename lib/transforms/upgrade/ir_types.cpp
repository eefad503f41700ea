#include "transforms/upgrade/ir_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "model/model.h"
#include "model/node_label.h"
#include "transforms/upgrade/schema.h"

namespace bnorm {

namespace {

// The first opset with an op that takes each element type newer than the
// IR 3 ones: a tensor of that type at a lower target has no op to go to.
int first_opset_of_type(int32_t t) {
  if (t == 16) return 13;              // bfloat16
  if (t >= 17 && t <= 20) return 19;  // float8
  if (t == 21 || t == 22) return 21;  // uint4, int4
  if (t == 23) return 23;             // float4e2m1
  if (t == 24) return 24;             // float8e8m0
  if (t >= 25) return 25;             // uint2, int2 and later
  return 1;
}

// Every element type the model declares (inputs, outputs, value_info,
// initializers, Constant values), with where.
std::vector<std::pair<int32_t, std::string>> declared_types(const onnx::ModelProto& m) {
  std::vector<std::pair<int32_t, std::string>> out;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    auto value = [&](const onnx::ValueInfoProto& v, const char* what) {
      if (v.type().has_tensor_type()) out.emplace_back(v.type().tensor_type().elem_type(), fmt::format("{} '{}'", what, v.name()));
    };
    for (const auto& v : g.input()) value(v, "graph input");
    for (const auto& v : g.output()) value(v, "graph output");
    for (const auto& v : g.value_info()) value(v, "value");
    for (const auto& t : g.initializer()) out.emplace_back(t.data_type(), fmt::format("initializer '{}'", t.name()));
    for (const auto& n : g.node()) {
      for (const auto& a : n.attribute()) {
        if (a.has_t()) out.emplace_back(a.t().data_type(), fmt::format("attribute {} of node {}", a.name(), node_label(n)));
      }
    }
    (void)path;
  });
  return out;
}

}  // namespace

std::vector<std::string> type_blockers(const onnx::ModelProto& m, int64_t to) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& [t, where] : declared_types(m)) {
    const int first = first_opset_of_type(t);
    if (first <= to || !seen.insert(where).second) continue;
    const int64_t ir = ir_version_of_type(t);
    out.push_back(fmt::format("{} is {}, a type no op has before opset {}{}", where, tensor_type_name(t), first,
                              ir > 3 ? fmt::format(" (IR {})", ir) : ""));
  }
  return out;
}

int64_t model_types_ir(const onnx::ModelProto& m) {
  int64_t ir = 3;
  for (const auto& [t, where] : declared_types(m)) ir = std::max(ir, ir_version_of_type(t));
  return ir;
}

int64_t required_ir_version(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset == 23) return 11;
  if (opset == 24) return 12;
  return 13;  // 25..28: ONNX 1.20 to 1.22 are IR 13 (Versioning.md); IR 14 is not published
}

}  // namespace bnorm
