// The graph executor: plans a graph (topological order, use counts,
// fusions), then runs it node by node through the op table. See
// evaluator.h for the contract. Values are tensors, sequences or optionals
// (eval::Value); ops see tensors through OpContext::inputs and the others
// through OpContext::values. Subgraphs run in a scope whose outer scope is
// their node's: If's branches through run_subgraph, Loop/Scan/SequenceMap
// bodies through OpContext::subgraph (planned once, run per iteration with
// a fresh scope, so memory does not grow with the iteration count).
#include "eval/run/evaluator.h"

#include <fmt/format.h>


#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/progress.h"
#include "eval/run/cache.h"
#include "eval/run/fusion.h"
#include "eval/run/inputs.h"
#include "eval/run/op.h"
#include "eval/run/plan.h"
#include "eval/run/preview_ops.h"
#include "eval/run/scope.h"
#include "eval/run/supported.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/tensor_proto.h"

namespace bnorm {

namespace {

using eval::Env;
using eval::OpContext;
using eval::Plan;
using eval::Tensors;
using eval::Value;
using Values = std::vector<Value>;

class Runner {
 public:
  Runner(const Model& model, const EvalOptions& options)
      : options_(options),
        opset_(default_opset(model.proto)),
        dir_(model.dir()),
        model_(&model),
        main_(&model.proto.graph()) {}

  // Registers `g`'s initializers in `env`, to be decoded on first use
  // (a given input of the same name takes precedence).
  void add_initializers(const onnx::GraphProto& g, Env& env) const {
    env.model = model_;
    env.widen = options_.float64;
    for (const auto& t : g.initializer()) {
      if (!env.values.count(t.name())) env.lazy.emplace(t.name(), &t);
    }
  }

  // Runs `g` in `env` (which already holds its inputs) and returns `wanted`.
  Values run_graph(const onnx::GraphProto& g, Env& env, const std::vector<std::string>& wanted);

  // Values of the main graph held to the end of the run, as wanted
  // outputs are (never freed, never written in place): EvalCache's weights.
  void hold(std::set<std::string> names) { held_ = std::move(names); }
  // With a cache: main-graph nodes whose inputs are all constant
  // (initializers, or outputs of such nodes) run once; their outputs are
  // held, kept in the cache, and later runs take them from it.
  void cache_constants(EvalCache* cache) { cache_ = cache; }
  const std::set<std::string>& constant_outputs() const { return constant_outputs_; }

  Plan plan(const onnx::GraphProto& g, const Env& env, const std::set<std::string>& pinned) const {
    // An observer sees every node's output, so nothing is fused away.
    const bool fuse = options_.fuse_activations && !options_.on_value && !options_.replace;
    return plan_graph(g, env, pinned, fuse);
  }
  // Runs planned `g` in `env`; `p` is left as it was (a body runs it again).
  Values run_planned(const onnx::GraphProto& g, const Plan& p, Env& env, const std::vector<std::string>& wanted,
                     const std::set<std::string>& pinned);

 private:

  // The node's schema version (check_supported has refused every node
  // without one before anything runs).
  int op_version(const onnx::NodeProto& n) const {
    if (eval::is_preview_domain(n.domain())) return 1;
    const int v = resolve_op(n.op_type(), opset_).version;
    if (!v) fail(ErrorKind::input, "op '{}' does not exist at opset {}", n.op_type(), opset_);
    return v;
  }

  // Runs node i, and the nodes fused into it (a Conv's BatchNormalization,
  // the activation after either): returns those, in order; node i's output
  // 0 is then named as the last one's. `uses`: how many nodes still read
  // each value; with `pinned`, which inputs die at node i
  // (OpContext::donated).
  std::vector<int> run_node(const onnx::GraphProto& g, const Plan& p, int i, Env& env,
                            const std::unordered_map<std::string, int>& uses, const std::set<std::string>& pinned);

  // Reports node k's tensor outputs to options_.on_value (main graph only).
  void observe(const onnx::GraphProto& g, int k, const Env& env) const;

  const EvalOptions& options_;
  int64_t opset_;
  std::filesystem::path dir_;
  const Model* model_;
  const onnx::GraphProto* main_;
  std::set<std::string> held_;
  EvalCache* cache_ = nullptr;
  std::vector<bool> constant_;  // by main-graph node: its outputs are constant
  std::set<std::string> constant_outputs_;
};

void Runner::observe(const onnx::GraphProto& g, int k, const Env& env) const {
  if (!options_.on_value || &g != main_) return;
  for (const auto& o : g.node(k).output()) {
    auto it = o.empty() ? env.values.end() : env.values.find(o);
    if (it != env.values.end() && it->second.is_tensor()) options_.on_value(o, node_label(g, k), it->second.tensor);
  }
}

// A Loop/Scan/SequenceMap body: its initializers decoded once into a
// scope between the node's and each run's, its plan made on the first run.
class Body final : public eval::Subgraph {
 public:
  Body(Runner& runner, const onnx::GraphProto& g, const Env& outer, std::string path)
      : runner_(runner), g_(g), path_(std::move(path)) {
    init_.outer = &outer;
    runner_.add_initializers(g_, init_);
    for (const auto& o : g_.output()) wanted_.push_back(o.name());
    pinned_.insert(wanted_.begin(), wanted_.end());
  }

  int input_count() const override { return g_.input_size(); }
  int output_count() const override { return g_.output_size(); }

  Values run(Values inputs, const std::string& where) override {
    try {
      if (static_cast<int>(inputs.size()) != g_.input_size()) {
        fail(ErrorKind::input, "the body declares {} inputs, {} are bound", g_.input_size(), inputs.size());
      }
      Env env;
      env.outer = &init_;
      for (int i = 0; i < g_.input_size(); ++i) {
        const auto& vi = g_.input(i);
        if (vi.name().empty()) continue;
        Value v = std::move(inputs[i]);
        if (vi.type().has_optional_type() && v.kind != Value::Kind::optional) v = Value::some(std::move(v));
        env.values[vi.name()] = std::move(v);
      }
      if (!plan_) plan_ = std::make_unique<eval::Plan>(runner_.plan(g_, env, pinned_));
      return runner_.run_planned(g_, *plan_, env, wanted_, pinned_);
    } catch (Error& e) {
      e.context(fmt::format("in '{}'{}{}", path_, where.empty() ? "" : ", ", where));
      throw;
    }
  }

 private:
  Runner& runner_;
  const onnx::GraphProto& g_;
  std::string path_;
  Env init_;
  std::vector<std::string> wanted_;
  std::set<std::string> pinned_;
  std::unique_ptr<eval::Plan> plan_;
};

// The name of `n`'s graph attribute that holds `sub`, for paths.
std::string attr_holding(const onnx::NodeProto& n, const onnx::GraphProto& sub) {
  for (const auto& a : n.attribute()) {
    if (a.has_g() && &a.g() == &sub) return a.name();
    for (const auto& sg : a.graphs()) {
      if (&sg == &sub) return a.name();
    }
  }
  return "subgraph";
}

// If's branch outputs as the node's outputs: tensors returned, sequences
// and optionals (If-13+ / If-16+) put in `value_outs` at their position.
Tensors branch_outputs(Values vals, int version, std::vector<std::optional<Value>>& value_outs) {
  Tensors out(vals.size());
  for (size_t k = 0; k < vals.size(); ++k) {
    Value& v = vals[k];
    if (v.is_tensor()) {
      out[k] = std::move(v.tensor);
      continue;
    }
    const bool optional = v.kind == Value::Kind::optional;
    if (version < 13 || (optional && version < 16)) {
      fail(ErrorKind::input, "branch output {} is {}; If-{} returns {}", k, v.describe(), version,
           version < 13 ? "tensors only" : "tensors or sequences");
    }
    if (k < value_outs.size()) value_outs[k] = std::move(v);
  }
  return out;
}

std::vector<int> Runner::run_node(const onnx::GraphProto& g, const Plan& p, int i, Env& env,
                                  const std::unordered_map<std::string, int>& uses,
                                  const std::set<std::string>& pinned) {
  const auto& n = g.node(i);
  OpContext ctx;
  ctx.node = &n;
  ctx.opset = opset_;
  ctx.model_dir = dir_;
  std::vector<std::optional<Value>> value_outs(n.output_size());
  ctx.value_outputs = &value_outs;
  try {
    ctx.version = op_version(n);
    const bool takes_values = eval::takes_values(n.op_type());
    for (const auto& name : n.input()) {
      const Value* v = name.empty() ? nullptr : env.find(name);
      if (!name.empty() && !v) fail(ErrorKind::input, "input '{}' has no value", name);
      if (v && !v->is_tensor() && !takes_values) {
        fail(ErrorKind::input, "input '{}' is {}; {} takes tensors", name, v->describe(), n.op_type());
      }
      ctx.values.push_back(v);
      ctx.inputs.push_back(v && v->is_tensor() ? &v->tensor : nullptr);
    }
    ctx.donated = eval::dying_inputs(n, env, uses, pinned);
    if (cache_ && &g == main_ && !options_.replace) {
      ctx.prepared_store = &cache_->prepared;
      for (const auto& name : n.input()) ctx.constant_inputs.push_back(held_.count(name) || constant_outputs_.count(name));
    }
    ctx.run_subgraph = [this, &env, &g, i, &ctx, &value_outs](const onnx::GraphProto& sub) {
      Env inner;
      inner.outer = &env;
      add_initializers(sub, inner);
      std::vector<std::string> outs;
      for (const auto& o : sub.output()) outs.push_back(o.name());
      Values vals;
      try {
        vals = run_graph(sub, inner, outs);
      } catch (Error& e) {
        e.context(fmt::format("in '{}/{}'", node_label(g, i, ""), attr_holding(g.node(i), sub)));
        throw;
      }
      return branch_outputs(std::move(vals), ctx.version, value_outs);
    };
    ctx.subgraph = [this, &env, &g, i](const onnx::GraphProto& sub, const std::string& attr) {
      return std::unique_ptr<eval::Subgraph>(new Body(*this, sub, env, node_label(g, i, "") + "/" + attr));
    };
    // What the node applies after its product (a Conv's BatchNormalization,
    // residual Add, activation or SiLU; a Gemm's or MatMul's activation).
    eval::Epilogue epilogue;
    epilogue.choose(g, p, i, opset_, env, ctx);
    const eval::OpFn fn = eval::is_preview_domain(n.domain()) ? eval::find_preview_op(n.op_type())
                                                              : eval::find_op(n.op_type(), ctx.version);
    if (!fn) fail(ErrorKind::unsupported, "{}-{} is not implemented", n.op_type(), ctx.version);
    Tensors out;
    if (n.op_type() == "Identity" && ctx.value(0) && !ctx.value(0)->is_tensor()) {
      value_outs.at(0) = eval::identity_value(ctx);
    } else {
      out = fn(ctx);
    }
    for (int k = 0; k < n.output_size(); ++k) {
      std::string name = n.output(k);
      if (name.empty()) continue;
      if (value_outs[k]) {
        env.values[name] = std::move(*value_outs[k]);
        continue;
      }
      if (k >= static_cast<int>(out.size()) || out[k].dtype == DType::undefined) {
        fail(ErrorKind::unsupported, "output {} ('{}') is not computed", k, name);
      }
      // Output 0 is the value of the last node the op applied.
      if (k == 0) name = g.node(epilogue.last(i, ctx)).output(0);
      if (options_.replace && &g == main_) {
        auto it = options_.replace->find(name);
        if (it != options_.replace->end()) eval::replace_output(name, it->second, out[k]);
      }
      out[k].name = name;
      env.values[name] = Value::of(std::move(out[k]));
    }
    return epilogue.absorbed(p, i, ctx);
  } catch (Error& e) {
    e.at_node(node_label(g, i), n.op_type(), ctx.version);
    throw;
  }
}

Values Runner::run_graph(const onnx::GraphProto& g, Env& env, const std::vector<std::string>& wanted) {
  eval::check_supported(g, opset_);
  std::set<std::string> pinned(wanted.begin(), wanted.end());
  if (&g != main_) return run_planned(g, plan(g, env, pinned), env, wanted, pinned);
  pinned.insert(held_.begin(), held_.end());
  Plan p = plan(g, env, pinned);
  // An observer or a replacement must see every node run.
  if (cache_ && !options_.on_value && !options_.replace) {
    constant_ = eval::constant_nodes(g, p, held_);
    for (int i = 0; i < g.node_size(); ++i) {
      if (!constant_[i]) continue;
      for (const auto& o : g.node(i).output()) {
        if (!o.empty()) constant_outputs_.insert(o);
      }
    }
    if (!constant_outputs_.empty()) {
      // Held like the weights: never freed, written in place or fused away.
      pinned.insert(constant_outputs_.begin(), constant_outputs_.end());
      p = plan(g, env, pinned);
    }
  }
  return run_planned(g, p, env, wanted, pinned);
}

Values Runner::run_planned(const onnx::GraphProto& g, const Plan& p, Env& env, const std::vector<std::string>& wanted,
                           const std::set<std::string>& pinned) {
  std::unordered_map<std::string, int> uses = p.uses;
  std::vector<bool> done(g.node_size(), false);
  auto release = [&](int i) {
    for (const auto& r : p.reads[i]) {
      if (--uses[r] == 0 && !pinned.count(r)) env.release(r);
    }
  };
  // The main graph's nodes are a progress phase, and each is logged with
  // its time at -vv (trace).
  const bool top = &g == main_;
  std::optional<progress::Phase> phase;
  if (top) phase.emplace("evaluating", static_cast<uint64_t>(p.order.size()), progress::Unit::nodes);
  const bool trace = top && log().should_log(spdlog::level::trace);
  for (int i : p.order) {
    if (done[i]) continue;
    if (top && !constant_.empty() && constant_[i] && eval::take_outputs(*cache_, g.node(i), env)) {
      done[i] = true;
      phase->advance(1);
      release(i);
      continue;
    }
    interrupt::check();  // a flag an in-process user watches (<bnorm/interrupt.h>)
    const Stopwatch took;
    const std::vector<int> absorbed = run_node(g, p, i, env, uses, pinned);
    if (top) phase->advance(1 + absorbed.size());
    if (trace) {
      std::string with;
      for (int k : absorbed) with += (with.empty() ? " (fused with " : ", ") + node_label(g, k);
      log().trace("node {}/{} {}{}: {:.3f} ms", i + 1, g.node_size(), node_label(g, i), with.empty() ? "" : with + ")",
                  took.ms());
    }
    done[i] = true;
    observe(g, i, env);
    const bool conv = !absorbed.empty() && g.node(i).op_type() == "Conv";
    if (options_.stats) {
      ++options_.stats->nodes_run;
      const bool gemm = !absorbed.empty() && (g.node(i).op_type() == "Gemm" || g.node(i).op_type() == "MatMul");
      if (conv) ++options_.stats->conv_fused;
      else if (gemm) ++options_.stats->product_fused;
      else options_.stats->fused += !absorbed.empty();
    }
    release(i);
    for (int k : absorbed) {
      done[k] = true;
      release(k);
    }
    // Outputs nobody reads are dropped at once.
    std::vector<int> ran{i};
    ran.insert(ran.end(), absorbed.begin(), absorbed.end());
    for (int k : ran) {
      for (const auto& o : g.node(k).output()) {
        if (!o.empty() && !p.uses.count(o) && !pinned.count(o)) env.release(o);
      }
    }
  }
  Values out;
  for (const auto& w : wanted) {
    auto it = env.values.find(w);
    if (it != env.values.end()) {
      out.push_back(std::move(it->second));
      env.values.erase(it);
      continue;
    }
    const Value* v = env.find(w);
    if (!v) fail(ErrorKind::input, "value '{}' is not computed by the graph", w);
    out.push_back(*v);
  }
  return out;
}

}  // namespace

bool eval_supports(const std::string& op_type, int64_t opset) {
  const int v = resolve_op(op_type, opset).version;
  return v && eval::find_op(op_type, v) != nullptr;
}

std::map<std::string, eval::Value> evaluate_values(const Model& model, const std::map<std::string, eval::Value>& inputs,
                                                   const EvalOptions& options) {
  const onnx::GraphProto& g = model.proto.graph();
  EvalCache* cache = options.cache;
  // Storage of values past their last use serves later outputs (memory
  // planning); with a cache, from one run to the next too.
  std::optional<BufferPoolScope> pool;
  if (cache) pool.emplace(cache->pool);
  else pool.emplace();
  Runner runner(model, options);
  eval::check_supported(g, default_opset(model.proto));
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
    Value v = it->second;
    eval::check_given_input(vi, v, options.check_input_shapes);
    env.values[vi.name()] = std::move(v);
  }
  for (const auto& [name, v] : inputs) {
    if (!declared.count(name)) fail(ErrorKind::usage, "'{}' is not an input of the model", name);
  }
  runner.add_initializers(g, env);
  std::set<std::string> weights;  // the initializers the cache keeps
  if (cache) {
    weights = eval::take_weights(*cache, model, options.float64, env);
    runner.hold(weights);
    runner.cache_constants(cache);
  }
  std::vector<std::string> wanted = options.outputs;
  if (wanted.empty()) {
    for (const auto& o : g.output()) wanted.push_back(o.name());
  }
  const Stopwatch took;
  Values values = runner.run_graph(g, env, wanted);
  if (cache) eval::give_back(*cache, env, weights, runner.constant_outputs());
  log().debug("evaluated {} nodes of {} ({:.1f} ms)", g.node_size(), model.path.string(), took.ms());
  std::map<std::string, Value> out;
  for (size_t i = 0; i < wanted.size(); ++i) out[wanted[i]] = std::move(values[i]);
  return out;
}

std::map<std::string, Tensor> evaluate(const Model& model, const std::map<std::string, Tensor>& inputs,
                                       const EvalOptions& options) {
  std::map<std::string, Value> given;
  for (const auto& [name, t] : inputs) given.emplace(name, Value::of(t));
  std::map<std::string, Value> values = evaluate_values(model, given, options);
  std::map<std::string, Tensor> out;
  for (auto& [name, v] : values) {
    if (!v.is_tensor()) {
      fail(ErrorKind::unsupported, "output '{}' is {}; only tensors can be returned here", name, v.describe());
    }
    out[name] = std::move(v.tensor);
  }
  return out;
}

}  // namespace bnorm
