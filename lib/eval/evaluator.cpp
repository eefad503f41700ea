// The graph executor: plans a graph (topological order, use counts,
// fusions), then runs it node by node through the op table. See
// evaluator.h for the contract.
#include "eval/evaluator.h"


#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "eval/activation.h"
#include "eval/op.h"
#include "model/graph_order.h"
#include "model/node_label.h"
#include "model/op_versions.h"
#include "model/norm_op.h"
#include "model/tensor_proto.h"

namespace bnorm {

namespace {

using eval::Activation;
using eval::OpContext;
using eval::Tensors;

// The values one graph sees: its own, then its enclosing graphs'.
struct Env {
  std::unordered_map<std::string, Tensor> values;
  const Env* outer = nullptr;

  const Tensor* find(const std::string& name) const {
    for (const Env* e = this; e; e = e->outer) {
      auto it = e->values.find(name);
      if (it != e->values.end()) return &it->second;
    }
    return nullptr;
  }
};

std::string declared_shape(const onnx::TensorShapeProto& s) {
  std::string out = "[";
  for (int i = 0; i < s.dim_size(); ++i) {
    const auto& d = s.dim(i);
    if (i) out += ", ";
    out += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return out + "]";
}

void check_input(const onnx::ValueInfoProto& vi, const Tensor& t, bool shapes) {
  if (!vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 0 && tt.elem_type() != static_cast<int32_t>(t.dtype)) {
    throw Error(ErrorKind::usage, fmt::format("input '{}' has type {}, the model declares {}", vi.name(),
                                              dtype_name(t.dtype), dtype_name(static_cast<DType>(tt.elem_type()))));
  }
  if (!shapes || !tt.has_shape()) return;
  const auto& s = tt.shape();
  bool ok = s.dim_size() == static_cast<int>(t.dims.size());
  for (int i = 0; ok && i < s.dim_size(); ++i) {
    if (s.dim(i).has_dim_value() && s.dim(i).dim_value() != t.dims[i]) ok = false;
  }
  if (!ok) {
    throw Error(ErrorKind::usage, fmt::format("input '{}' has shape {}, the model declares {}", vi.name(),
                                              shape_str(t.dims), declared_shape(s)));
  }
}

class Runner {
 public:
  Runner(const Model& model, const EvalOptions& options)
      : options_(options), opset_(default_opset(model.proto)), dir_(model.dir()) {}

  // Every node of `g` (subgraphs included) must resolve to an implemented
  // schema version. Every problem is gathered and reported in one Error:
  // per op and version, how many nodes and the first few labels.
  void check_supported(const onnx::GraphProto& g) const {
    std::map<std::string, std::vector<const onnx::NodeProto*>> nodes;  // problem: its nodes
    std::map<std::string, std::vector<std::string>> labels;            // problem: their labels
    collect_unsupported(g, "", nodes, labels);
    if (labels.empty()) return;
    if (labels.size() == 1 && labels.begin()->second.size() == 1) {
      const onnx::NodeProto& n = *nodes.begin()->second.front();
      Error e(ErrorKind::unsupported, labels.begin()->first);
      e.at_node(n.name().empty() ? labels.begin()->second.front() : n.name(), n.op_type(),
                op_version_at(n.op_type(), opset_));
      throw e;
    }
    std::vector<std::string> parts;
    for (const auto& [what, ls] : labels) {
      std::vector<std::string> shown(ls.begin(), ls.begin() + std::min<size_t>(ls.size(), 3));
      parts.push_back(fmt::format("{} ({} node{}: {}{})", what, ls.size(), ls.size() == 1 ? "" : "s",
                                  fmt::join(shown, ", "), ls.size() > 3 ? ", ..." : ""));
    }
    throw Error(ErrorKind::unsupported,
                fmt::format("{} kinds of node cannot run: {}", parts.size(), fmt::join(parts, "; ")));
  }

  void collect_unsupported(const onnx::GraphProto& g, const std::string& path,
                           std::map<std::string, std::vector<const onnx::NodeProto*>>& nodes,
                           std::map<std::string, std::vector<std::string>>& labels) const {
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      const std::string problem = unsupported_reason(n);
      if (!problem.empty()) {
        nodes[problem].push_back(&n);
        labels[problem].push_back(node_label(g, i, path));
      }
      for (const auto& a : n.attribute()) {
        const std::string sub = path + node_label(g, i, "") + "/" + a.name() + "/";
        if (a.has_g()) collect_unsupported(a.g(), sub, nodes, labels);
        for (const auto& sg : a.graphs()) collect_unsupported(sg, sub, nodes, labels);
      }
    }
  }

  // Why bnorm eval cannot run `n`, or "" when it can.
  std::string unsupported_reason(const onnx::NodeProto& n) const {
    if (!is_default_domain(n.domain())) {
      return fmt::format("op '{}.{}' is not supported by bnorm eval (domain '{}')", n.domain(), n.op_type(),
                         n.domain());
    }
    const ResolvedOp r = resolve_op(n.op_type(), opset_);
    if (!r.known) return fmt::format("op '{}' is not an ONNX op", n.op_type());
    if (!r.version) return fmt::format("op '{}' does not exist at opset {}: {}", n.op_type(), opset_, r.why_not);
    if (eval::find_op(n.op_type(), r.version)) return {};
    if (const char* why = eval::refusal_reason(n.op_type())) {
      return fmt::format("op '{}' is not supported by bnorm eval: {}", n.op_type(), why);
    }
    if (eval::implements_op(n.op_type())) {
      return fmt::format("{}-{} is not implemented by bnorm eval ({})", n.op_type(), r.version,
                         eval::implemented_versions(n.op_type()));
    }
    return fmt::format("op '{}' is not supported by bnorm eval", n.op_type());
  }

  void add_initializers(const onnx::GraphProto& g, Env& env) const {
    for (const auto& t : g.initializer()) {
      if (!env.values.count(t.name())) env.values.emplace(t.name(), decode_tensor(t, dir_));
    }
  }

  // Runs `g` in `env` (which already holds its inputs) and returns `wanted`.
  Tensors run_graph(const onnx::GraphProto& g, Env& env, const std::vector<std::string>& wanted);

 private:
  struct Plan {
    std::vector<int> order;
    std::vector<std::vector<std::string>> reads;
    std::unordered_map<std::string, int> uses;
    std::vector<int> fused_with;  // activation node index, or -1
  };

  // The node's schema version (check_supported has refused every node
  // without one before anything runs).
  int op_version(const onnx::NodeProto& n) const {
    const int v = resolve_op(n.op_type(), opset_).version;
    if (!v) fail(ErrorKind::input, "op '{}' does not exist at opset {}", n.op_type(), opset_);
    return v;
  }

  Plan plan(const onnx::GraphProto& g, const Env& env, const std::set<std::string>& pinned) const;
  // Runs node i (and its fused activation); true when it ran fused.
  bool run_node(const onnx::GraphProto& g, const Plan& p, int i, Env& env);

  const EvalOptions& options_;
  int64_t opset_;
  std::filesystem::path dir_;
};

Runner::Plan Runner::plan(const onnx::GraphProto& g, const Env& env, const std::set<std::string>& pinned) const {
  const int count = g.node_size();
  Plan p;
  p.reads.resize(count);
  p.fused_with.assign(count, -1);
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  for (int i = 0; i < count; ++i) {
    const auto& n = g.node(i);
    p.reads[i] = node_reads(n);
    for (const auto& r : p.reads[i]) {
      ++p.uses[r];
      if (!producer.count(r) && !env.find(r)) {
        Error e(ErrorKind::input, fmt::format("input '{}' names no value of the graph", r));
        e.at_node(n.name(), n.op_type());
        throw e;
      }
    }
  }
  p.order = topological_order(g, p.reads);
  if (!options_.fuse_activations) return p;
  for (int i = 0; i < count; ++i) {
    const auto& n = g.node(i);
    if (!is_norm_node(n) || n.output_size() == 0 || n.output(0).empty()) continue;
    const std::string& y = n.output(0);
    if (p.uses[y] != 1 || pinned.count(y)) continue;
    for (int j = 0; j < count; ++j) {
      const auto& a = g.node(j);
      const bool reads_y = std::find(p.reads[j].begin(), p.reads[j].end(), y) != p.reads[j].end();
      if (!reads_y) continue;
      const bool only_as_x = a.input_size() > 0 && a.input(0) == y &&
                             std::count(a.input().begin(), a.input().end(), y) == 1;
      if (is_default_domain(a.domain()) && eval::is_activation_op(a.op_type()) && only_as_x &&
          a.output_size() > 0 && !a.output(0).empty()) {
        p.fused_with[i] = j;
      }
      break;
    }
  }
  return p;
}

bool Runner::run_node(const onnx::GraphProto& g, const Plan& p, int i, Env& env) {
  const auto& n = g.node(i);
  OpContext ctx;
  ctx.node = &n;
  ctx.opset = opset_;
  ctx.model_dir = dir_;
  try {
    ctx.version = op_version(n);
    for (const auto& name : n.input()) {
      const Tensor* t = name.empty() ? nullptr : env.find(name);
      if (!name.empty() && !t) fail(ErrorKind::input, "input '{}' has no value", name);
      ctx.inputs.push_back(t);
    }
    ctx.run_subgraph = [this, &env](const onnx::GraphProto& sub) {
      Env inner;
      inner.outer = &env;
      add_initializers(sub, inner);
      std::vector<std::string> outs;
      for (const auto& o : sub.output()) outs.push_back(o.name());
      return run_graph(sub, inner, outs);
    };
    // Fuse only when the activation's other inputs (Clip's bounds) exist now.
    Activation act;
    const int j = p.fused_with[i];
    if (j >= 0) {
      const auto& a = g.node(j);
      std::vector<const Tensor*> a_inputs{nullptr};
      bool ready = true;
      for (int k = 1; k < a.input_size(); ++k) {
        const Tensor* t = a.input(k).empty() ? nullptr : env.find(a.input(k));
        ready = ready && (a.input(k).empty() || t);
        a_inputs.push_back(t);
      }
      if (ready) {
        act = eval::read_activation(a, op_version(a), a_inputs);
        ctx.fused = &act;
      }
    }
    const eval::OpFn fn = eval::find_op(n.op_type(), ctx.version);
    if (!fn) fail(ErrorKind::unsupported, "{}-{} is not implemented", n.op_type(), ctx.version);
    Tensors out = fn(ctx);
    for (int k = 0; k < n.output_size(); ++k) {
      std::string name = n.output(k);
      if (name.empty()) continue;
      if (k >= static_cast<int>(out.size()) || out[k].dtype == DType::undefined) {
        fail(ErrorKind::unsupported, "output {} ('{}') is not computed", k, name);
      }
      if (k == 0 && ctx.fused) name = g.node(j).output(0);
      out[k].name = name;
      env.values[name] = std::move(out[k]);
    }
    return ctx.fused != nullptr;
  } catch (Error& e) {
    e.at_node(n.name(), n.op_type(), ctx.version);
    throw;
  }
}

Tensors Runner::run_graph(const onnx::GraphProto& g, Env& env, const std::vector<std::string>& wanted) {
  check_supported(g);
  const std::set<std::string> pinned(wanted.begin(), wanted.end());
  Plan p = plan(g, env, pinned);
  std::vector<bool> done(g.node_size(), false);
  auto release = [&](int i) {
    for (const auto& r : p.reads[i]) {
      if (--p.uses[r] == 0 && !pinned.count(r)) env.values.erase(r);
    }
  };
  for (int i : p.order) {
    if (done[i]) continue;
    const bool fused = run_node(g, p, i, env);
    done[i] = true;
    if (options_.stats) {
      ++options_.stats->nodes_run;
      options_.stats->fused += fused;
    }
    const int j = p.fused_with[i];
    release(i);
    if (fused) {
      done[j] = true;
      release(j);
    }
    // Outputs nobody reads are dropped at once.
    for (int k : {i, fused ? j : -1}) {
      if (k < 0) continue;
      for (const auto& o : g.node(k).output()) {
        if (!o.empty() && !p.uses.count(o) && !pinned.count(o)) env.values.erase(o);
      }
    }
  }
  Tensors out;
  for (const auto& w : wanted) {
    auto it = env.values.find(w);
    if (it != env.values.end()) {
      out.push_back(std::move(it->second));
      env.values.erase(it);
      continue;
    }
    const Tensor* t = env.find(w);
    if (!t) fail(ErrorKind::input, "value '{}' is not computed by the graph", w);
    out.push_back(*t);
  }
  return out;
}

}  // namespace

bool eval_supports(const std::string& op_type, int64_t opset) {
  const int v = resolve_op(op_type, opset).version;
  return v && eval::find_op(op_type, v) != nullptr;
}

std::map<std::string, Tensor> evaluate(const Model& model, const std::map<std::string, Tensor>& inputs,
                                       const EvalOptions& options) {
  const onnx::GraphProto& g = model.proto.graph();
  Runner runner(model, options);
  runner.check_supported(g);
  std::unordered_set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::unordered_set<std::string> declared;
  Env env;
  for (const auto& vi : g.input()) {
    declared.insert(vi.name());
    auto it = inputs.find(vi.name());
    if (it == inputs.end()) {
      if (!initializers.count(vi.name())) fail(ErrorKind::usage, "missing input '{}'", vi.name());
      continue;
    }
    check_input(vi, it->second, options.check_input_shapes);
    env.values[vi.name()] = it->second;
  }
  for (const auto& [name, t] : inputs) {
    if (!declared.count(name)) fail(ErrorKind::usage, "'{}' is not an input of the model", name);
  }
  runner.add_initializers(g, env);
  std::vector<std::string> wanted = options.outputs;
  if (wanted.empty()) {
    for (const auto& o : g.output()) wanted.push_back(o.name());
  }
  Tensors values = runner.run_graph(g, env, wanted);
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < wanted.size(); ++i) out[wanted[i]] = std::move(values[i]);
  return out;
}

}  // namespace bnorm
