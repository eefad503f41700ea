#include "transforms/upgrade.h"

#include <fmt/format.h>

#include <unordered_set>

#include "core/error.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "transforms/upgrade_onnx.h"
#include "transforms/upgrade_restore.h"

namespace bnorm {

namespace {

using namespace upgrade_detail;

void check_opsets(int64_t from, int64_t to) {
  if (to < kUpgradeMinOpset || to > kUpgradeMaxOpset) {
    throw Error(ErrorKind::usage, fmt::format("--to {}: the target opset must be {} to {}", to, kUpgradeMinOpset,
                                              kUpgradeMaxOpset));
  }
  const int64_t known = onnx_max_opset();
  if (from > known) {
    throw Error(ErrorKind::unsupported,
                fmt::format("the model's opset {} is newer than the ONNX library bnorm uses knows (up to opset {}); "
                            "cannot convert it to opset {}", from, known, to))
        .with_hint("convert it with a newer ONNX first, or re-export the model at an older opset");
  }
}

void set_default_opset(onnx::ModelProto& m, int64_t opset) {
  for (auto& op : *m.mutable_opset_import()) {
    if (is_default_domain(op.domain())) {
      op.set_version(opset);
      return;
    }
  }
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
}

// Keeps only the value_info entries the input declared (by name): the
// converter and shape inference add their own, which can go stale.
void keep_declared_value_info(onnx::ModelProto& out, const onnx::ModelProto& in) {
  std::unordered_set<std::string> declared;
  for_each_graph(in.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.value_info()) declared.insert(v.name());
  });
  for_each_graph_mut(*out.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
    auto* vi = g.mutable_value_info();
    for (int i = vi->size() - 1; i >= 0; --i) {
      if (!declared.count(vi->Get(i).name())) vi->erase(vi->begin() + i);
    }
  });
}

// ONNX's IR importer, which its converter runs first, dereferences the value
// of every name a node input or graph output uses: an undefined one crashes
// it. Such a model is invalid anyway; refuse it by name first.
void check_names_defined(const GraphIndex& index) {
  for (const auto& scope : index.scopes()) {
    for (const auto& node : scope->graph->node()) {
      for (const auto& in : node.input()) {
        if (!in.empty() && !index.find(*scope, in)) {
          throw Error(ErrorKind::input, fmt::format("input '{}' names no value (no graph input, initializer or "
                                                    "node output of graph {} or around it)", in, scope->path))
              .at_node(node.name(), node.op_type());
        }
      }
    }
    for (const auto& out : scope->graph->output()) {
      if (!index.find(*scope, out.name())) {
        fail(ErrorKind::input, "graph output '{}' of graph {} names no value (no node, input or initializer makes it)",
             out.name(), scope->path);
      }
    }
  }
}

}  // namespace

UpgradeReport upgrade_model(Model& model, const UpgradeOptions& options) {
  const int64_t from = default_opset(model.proto), to = options.target;
  check_opsets(from, to);
  check_ops(model.proto, from, to);
  UpgradeReport r;
  r.from_opset = from;
  r.to_opset = to;
  r.from_ir = model.proto.ir_version();

  onnx::ModelProto inferred = with_inferred_shapes(model.proto);
  set_default_opset(inferred, from);
  inferred.set_ir_version(std::max<int64_t>(inferred.ir_version(), 3));  // IR 1/2 had no opset_import
  const GraphIndex index(inferred);
  check_names_defined(index);

  onnx::ModelProto work = inferred;
  const std::vector<Hidden> hidden = hide_nodes(work, inferred, from, to);
  if (from != to) work = run_onnx_converter(work, from, to);
  restore_nodes(work, {&index, &hidden, from, to, options.inference}, r);
  forget_placeholder_domain(work);
  keep_declared_value_info(work, model.proto);
  set_default_opset(work, to);
  work.set_ir_version(std::max(work.ir_version(), required_ir_version(to)));
  r.to_ir = work.ir_version();
  model.proto = std::move(work);
  return r;
}

}  // namespace bnorm
