#include "transforms/upgrade/structure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "model/attr_values.h"
#include "model/attrs.h"
#include "model/graph_index.h"
#include "model/shape_infer/shape_infer.h"
#include "model/model.h"
#include "model/model_walk.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "transforms/upgrade/schema.h"
#include "transforms/upgrade/types.h"

namespace bnorm::upgrade_detail {

namespace {

// The graph attribute `name` of `n`, or nullptr.
const onnx::GraphProto* graph_attr(const onnx::NodeProto& n, const char* name) {
  const auto* a = find_attr(n, name);
  return a && a->has_g() ? &a->g() : nullptr;
}

// Why the subgraphs of `n` (at schema `version`) do not fit it, or "".
std::string subgraph_problem(const onnx::NodeProto& n, int version) {
  const int ins = n.input_size(), outs = n.output_size();
  auto mismatch = [](const char* what, int got, int want) {
    return fmt::format("its {} has {}, where the node needs {}", what, got, want);
  };
  if (n.op_type() == "If") {
    for (const char* b : {"then_branch", "else_branch"}) {
      const auto* g = graph_attr(n, b);
      if (g && g->output_size() != outs) return mismatch(b, g->output_size(), outs) + " outputs";
    }
  } else if (n.op_type() == "Loop") {
    const auto* g = graph_attr(n, "body");
    if (!g) return "";
    if (g->input_size() != ins) return mismatch("body", g->input_size(), ins) + " inputs (iteration, condition, the loop-carried values)";
    if (g->output_size() != outs + 1) return mismatch("body", g->output_size(), outs + 1) + " outputs (condition, the node's outputs)";
  } else if (n.op_type() == "Scan") {
    const auto* g = graph_attr(n, "body");
    if (!g) return "";
    const int values = ins - (version < 9 ? 1 : 0);
    const int64_t scans = attr_int(n, "num_scan_inputs", 0);
    if (scans < 1 || scans > values) {
      return fmt::format("num_scan_inputs {} does not fit its {} state and scan inputs", scans, values);
    }
    if (version >= 9 && ins > 0 && n.input(0).empty()) {
      return "its first input is empty: Scan-9 and later have no sequence_lens (Scan-8's first input)";
    }
    if (g->input_size() != values) return mismatch("body", g->input_size(), values) + " inputs (the states, the scan inputs)";
    if (g->output_size() != outs) return mismatch("body", g->output_size(), outs) + " outputs";
  }
  return "";
}

}  // namespace

std::vector<std::string> structure_problems(const onnx::ModelProto& m) {
  const int64_t opset = default_opset(m);
  const onnx::ModelProto inferred = with_all_inferred_shapes(m);  // ONNX 1.12's and bnorm's (above 17 too)
  const GraphIndex index(inferred);
  std::vector<std::string> problems;
  for_each_graph(inferred.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
    const GraphIndex::Scope* scope = nullptr;
    for (const auto& sc : index.scopes())
      if (sc->graph == &g) scope = sc.get();
    if (!scope) return;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (!is_default_domain(n.domain())) continue;
      const std::string label = quoted_label(n, i, path);
      const ResolvedOp r = resolve_op(n.op_type(), opset);
      if (r.version == 0) {
        problems.push_back(fmt::format("{}: op '{}' does not exist at opset {}: {}", label, n.op_type(), opset,
                                       r.why_not.empty() ? "unknown op" : r.why_not));
        continue;
      }
      std::string p = subgraph_problem(n, r.version);
      if (p.empty()) p = attr_value_problem(n, r.version);
      const OpSchemaInfo* s = schema_info(n.op_type(), r.version);
      if (p.empty() && s && s->max_out != 0) {  // max_out 0: no schema in the Changelog (a deprecation note only)
        p = check_schema(n, *s, [&](const std::string& v) -> std::string {
          const onnx::TypeProto* t = index.declared_type(*scope, v);
          return t ? type_text(*t) : "";
        });
      }
      if (!p.empty()) problems.push_back(fmt::format("{} ({}-{}): {}", label, n.op_type(), r.version, p));
    }
  });
  return problems;
}

void check_structure(const onnx::ModelProto& m) {
  const auto problems = structure_problems(m);
  if (problems.empty()) return;
  throw Error(ErrorKind::input, fmt::format("the converted model does not pass bnorm's structural check at opset {}:\n  {}",
                                            default_opset(m), fmt::join(problems, "\n  ")))
      .with_hint("nothing was written; --no-check writes it anyway");
}

}  // namespace bnorm::upgrade_detail
