// The lowering pass (lower_pass.h): finds the nodes to lower, runs each
// one's lowering (steps/lower_*.cpp) on a steps::NormSite over the model
// with shapes inferred, and splices the nodes in where the node was.
#include "transforms/upgrade/lower_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/prune.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/lower/lower.h"
#include "transforms/upgrade/steps/walk.h"

namespace bnorm::upgrade_detail {

namespace {

using LowerFn = void (*)(steps::NormSite&, int64_t);

struct LowerRow {
  const char* op;
  int first;  // going down: lowered below the op's first (non-experimental) version
  int last;   // going up: lowered above the last opset that has the op (0: never)
  LowerFn fn;
  int inputs = 1;  // the inputs the op requires (the lowerings read them)
};

const LowerRow kLowerings[] = {
    {"Gelu", 20, 0, steps::lower_gelu_20},
    {"LayerNormalization", 17, 0, steps::lower_layernorm_17, 2},
    {"RMSNormalization", 23, 0, steps::lower_rmsnorm_23, 2},
    {"GroupNormalization", 18, 0, steps::lower_groupnorm_18, 3},
    {"MeanVarianceNormalization", 9, 0, steps::lower_mvn_9},
    {"ConstantOfShape", 9, 0, steps::lower_constantofshape_9},
    {"Attention", 23, 0, steps::lower_attention_23, 3},
    {"Swish", 24, 0, steps::lower_swish_24},
    {"SwiGLU", 28, 0, steps::lower_swiglu_28, 2},
    // No exact or simple form below their opset: refused with why (transforms/upgrade/lower/refused_24.cpp).
    {"TensorScatter", 24, 0, steps::lower_tensorscatter_24, 2},
    {"CumProd", 26, 0, steps::lower_refused_24, 2},
    {"BitCast", 26, 0, steps::lower_refused_24},
    {"LinearAttention", 27, 0, steps::lower_linear_attention_27, 3},
    {"CausalConvWithState", 27, 0, steps::lower_causalconv_27, 2},
    // The experimental ops ONNX removed after opset 9 (transforms/upgrade/lower/experimental_9.cpp).
    {"Affine", 0, 9, steps::lower_experimental_9},
    {"Crop", 0, 9, steps::lower_experimental_9},
    {"ImageScaler", 0, 9, steps::lower_experimental_9},
    {"ParametricSoftplus", 0, 9, steps::lower_experimental_9},
    {"Scale", 0, 9, steps::lower_experimental_9},
    {"ScaledTanh", 0, 9, steps::lower_experimental_9},
};

const LowerRow* lowering_of(const onnx::NodeProto& n, int64_t from, int64_t to) {
  if (to == from || !is_default_domain(n.domain())) return nullptr;
  for (const auto& row : kLowerings) {
    if (n.op_type() != row.op) continue;
    if (to < from && row.first && to < row.first && op_version_at(row.op, from) >= row.first) return &row;
    if (to > from && row.last && to > row.last && from <= row.last) return &row;
  }
  return nullptr;
}

bool any_lowered(const onnx::ModelProto& m, int64_t from, int64_t to) {
  bool found = false;
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node()) found = found || lowering_of(n, from, to) != nullptr;
  });
  return found;
}


// Lowers (on `m`) every node to lower; one NodePlan each. `released`: the
// inputs of the lowered nodes (constants no one reads afterwards go).
void run(onnx::ModelProto& m, int64_t from, int64_t to, std::vector<NodePlan>& plans, std::vector<Error>& errors,
         std::set<std::string>& released, UpgradeReport* r) {
  auto select = [&](const onnx::NodeProto& n, int& version) {
    version = op_version_at(n.op_type(), from);
    return lowering_of(n, from, to) != nullptr;
  };
  steps::walk_sites(m, to, select, [&](steps::NormSite& s, const steps::WalkedNode& at) {
    const onnx::NodeProto n = s.node;  // as it was: the steps change s.node
    const LowerRow* row = lowering_of(n, from, to);
    NodePlan plan{at.path, node_label(n, at.index, at.path == "main" ? "" : at.path + "/"),
                  quoted_label(n, at.index, at.path), n.op_type(), s.version, 0, "bnorm", {}, ""};
    try {
      // Every lowering reads its required inputs and writes output 0.
      if (n.input_size() < row->inputs || n.output_size() < 1 || n.output(0).empty()) {
        steps::refuse(s, fmt::format("{} needs {} input{} and an output; the node has {} and {}", n.op_type(),
                                     row->inputs, row->inputs == 1 ? "" : "s", n.input_size(), n.output_size()));
      }
      for (int k = 0; k < row->inputs; ++k) {
        if (n.input(k).empty()) steps::refuse(s, fmt::format("required input {} of {} is empty", k, n.op_type()));
      }
      row->fn(s, from);
      plan.changes.push_back(s.before.empty() ? std::string("written as an initializer")
                                              : "lowered to " + steps::lowered_ops(s));
    } catch (Error& e) {
      // Why the node cannot stay, then why it cannot be lowered.
      const std::string gone = to < from ? fmt::format("does not exist at opset {}", to)
                                         : fmt::format("was removed from ONNX after opset {}", row->last);
      plan.blocker = fmt::format("op '{}' {}, and bnorm cannot write it as other ops: {}", n.op_type(), gone,
                                 e.bare_message());
      errors.push_back(Error(ErrorKind::unsupported, plan.blocker)
                           .at_node(node_label(n), n.op_type(), s.version)
                           .context("in graph " + at.path));
    }
    const bool ok = plan.blocker.empty();
    if (ok) {
      for (const auto& in : n.input()) released.insert(in);
      if (r) r->rewrites.push_back({at.path, n.name(), n.op_type(), plan.changes.front(), s.report.added, plan.label});
    }
    plans.push_back(std::move(plan));
    // The node goes: its lowering (the site's nodes before it) takes its place.
    s.after.clear();
    return ok ? steps::Visit::replace : steps::Visit::keep;
  });
}

}  // namespace

bool is_lowered(const onnx::NodeProto& n, int64_t from, int64_t to) { return lowering_of(n, from, to) != nullptr; }

namespace {

// Runs passes until every node is lowered or a pass lowers none: shape
// inference stops at ops without an inference function (the experimental
// ones), so a node after one learns its input's type once that one is
// lowered. `plans`: one per node, its last attempt.
void run_passes(onnx::ModelProto& work, int64_t from, int64_t to, std::vector<NodePlan>& plans,
                std::vector<Error>& errors, std::set<std::string>& released, UpgradeReport* r) {
  for (;;) {
    std::vector<NodePlan> pass;
    errors.clear();
    run(work, from, to, pass, errors, released, r);
    bool progress = false;
    for (auto& p : pass) {
      progress = progress || p.blocker.empty();
      if (p.blocker.empty() || !errors.empty()) plans.push_back(p);
    }
    if (errors.empty() || !progress) {
      if (!errors.empty()) {  // keep the failed nodes' last attempt only
        std::vector<NodePlan> kept;
        for (auto& p : plans)
          if (p.blocker.empty()) kept.push_back(std::move(p));
        for (auto& p : pass)
          if (!p.blocker.empty()) kept.push_back(std::move(p));
        plans = std::move(kept);
      }
      return;
    }
  }
}

}  // namespace

void lower_for_target(Model& model, int64_t from, int64_t to, UpgradeReport& r) {
  onnx::ModelProto& m = model.proto;
  if (!any_lowered(m, from, to)) return;
  onnx::ModelProto work = m;
  std::vector<NodePlan> plans;
  std::vector<Error> errors;
  std::set<std::string> released;
  UpgradeReport lowered;
  run_passes(work, from, to, plans, errors, released, &lowered);
  if (!errors.empty()) throw LoweringFailed{std::move(errors)};
  const std::set<std::string> before = names_in_use(m);
  remove_released(work, released);
  const std::set<std::string> after = names_in_use(work);
  const GraphIndex index(m);
  for (const auto& name : released) {
    if (before.count(name) && !after.count(name) && index.constant(index.main(), name)) r.removed.push_back(name);
  }
  for (auto& w : lowered.rewrites) r.rewrites.push_back(std::move(w));
  m = std::move(work);
}

std::vector<NodePlan> plan_lowering(const onnx::ModelProto& m, int64_t from, int64_t to) {
  std::vector<NodePlan> plans;
  if (!any_lowered(m, from, to)) return plans;
  onnx::ModelProto work = m;
  std::vector<Error> errors;
  std::set<std::string> released;
  run_passes(work, from, to, plans, errors, released, nullptr);
  return plans;
}

}  // namespace bnorm::upgrade_detail
