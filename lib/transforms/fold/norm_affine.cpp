// The rewriting half of the norm-family fold (norm_affine.h holds the
// contract): computes W', c' and the reset scale/bias of one matched norm
// and writes them. Tensors change in place (same TensorProto) or are added,
// so pointers the GraphIndex holds stay valid until every fold is written;
// what the folds stopped using is removed at the end.
#include "transforms/fold/norm_affine.h"

#include <fmt/format.h>

#include <memory>
#include <set>

#include "core/error.h"
#include "model/attrs.h"
#include "model/graph_index.h"
#include "model/shape_infer/shape_infer.h"
#include "model/node_label.h"
#include "model/op_versions.h"
#include "model/prune.h"
#include "model/tensor_proto.h"
#include "transforms/fold/generated.h"
#include "transforms/fold/bn_plan.h"
#include "transforms/fold/norm_affine_match.h"
#include "transforms/fold/norm_affine_math.h"

namespace bnorm {

namespace {


void set_float_attr(onnx::NodeProto& n, const std::string& name, float v) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.name() == name) return a.set_f(v);
  }
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

std::string unique_name(std::set<std::string>& taken, const std::string& base) {
  std::string n = base;
  for (int i = 1; taken.count(n); ++i) n = fmt::format("{}_{}", base, i);
  taken.insert(n);
  return n;
}

// One value per input feature k: GroupNormalization-18's per-group values
// repeated over each group's channels; otherwise as stored (K values or one).
std::vector<double> per_feature(const Model& model, const GraphIndex::Constant& c, int64_t per_group) {
  std::vector<double> v = decode_as_saved(model, *c.tensor).to_f64();
  if (per_group == 1) return v;
  std::vector<double> out;
  for (double x : v) out.insert(out.end(), static_cast<size_t>(per_group), x);
  return out;
}

// c' = c * 1 + add[j], broadcast over c's rows (Gemm C [M, 1] or [M, N]);
// dims: c's with the last one N (or [N] for a scalar or absent c).
Tensor new_c(const Tensor* c, const std::vector<double>& add, DType type, int64_t N) {
  if (!c) return Tensor::from_f64(type, {N}, add);
  const std::vector<double> v = c->to_f64();
  std::vector<int64_t> dims = c->dims.empty() ? std::vector<int64_t>{N} : c->dims;
  const int64_t cols = c->dims.empty() ? 1 : c->dims.back();
  dims.back() = N;
  const int64_t rows = static_cast<int64_t>(v.size()) / cols;
  std::vector<double> out(static_cast<size_t>(rows * N));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < N; ++j) out[r * N + j] = v[r * cols + (cols == 1 ? 0 : j)] + add[j];
  return Tensor::from_f64(c->dtype, dims, out);
}

struct Writer {
  Model& model;
  const GraphIndex& index;
  const NormFoldMatch& m;
  std::set<std::string>& names;
  std::set<std::string>& released;
  uint64_t new_bytes = 0;

  onnx::GraphProto& graph() const { return *const_cast<onnx::GraphProto*>(m.scope->graph); }
  bool sole_user(const std::string& name, const GraphIndex::Constant& c) const {
    const auto* v = index.find(*m.scope, name);
    const bool init = c.kind == GraphIndex::ConstKind::initializer ||
                      c.kind == GraphIndex::ConstKind::initializer_graph_input;
    return init && v && !v->graph_output && v->uses.size() == 1 && v->scope == m.scope;
  }
  // Input `i` of `node` (holding constant `c`, or nothing) takes `t`.
  void replace(const onnx::NodeProto& node, int i, const GraphIndex::Constant* c, const Tensor& t,
               const std::string& suffix) {
    auto& n = const_cast<onnx::NodeProto&>(node);
    const std::string old = i < n.input_size() ? n.input(i) : "";
    const bool in_place = c && sole_user(old, *c) &&
                          std::vector<int64_t>(c->tensor->dims().begin(), c->tensor->dims().end()) == t.dims;
    const std::string name =
        in_place ? old : unique_name(names, (old.empty() ? node.output(0) : old) + suffix);
    put_tensor(graph(), t, name, in_place, model.proto.ir_version() < 4);
    if (!in_place) new_bytes += t.bytes.size();
    if (!in_place && !old.empty()) released.insert(old);
    while (n.input_size() <= i) n.add_input("");
    n.set_input(i, name);
  }
};

// The consumer's c' when the norm has a non-zero bias.
void write_bias(Writer& w, const std::vector<double>& bw, DType type) {
  const NormFoldMatch& m = w.m;
  Tensor old;
  if (m.c) old = decode_as_saved(w.model, *m.c->tensor);
  std::vector<double> add = bw;
  if (m.kind == NormConsumer::gemm) {
    const float alpha = attr_float(*m.consumer, "alpha", 1.0f), beta = attr_float(*m.consumer, "beta", 1.0f);
    const bool fresh = !m.c || beta == 0.0f;  // C' = alpha * bias*B replaces a C that never counted
    for (double& x : add) x *= fresh ? alpha : static_cast<double>(alpha) / beta;
    if (fresh) set_float_attr(const_cast<onnx::NodeProto&>(*m.consumer), "beta", 1.0f);
    const Tensor c = new_c(fresh ? nullptr : &old, add, m.c ? old.dtype : type, m.N);
    return w.replace(*m.consumer, 2, m.c ? &*m.c : nullptr, c, "_folded");
  }
  const Tensor c = new_c(m.c ? &old : nullptr, add, m.c ? old.dtype : type, m.N);
  if (m.kind == NormConsumer::conv) return w.replace(*m.consumer, 2, m.c ? &*m.c : nullptr, c, "_folded");
  w.replace(*m.add, m.add_input, &*m.c, c, "_folded");
}

// Writes the fold; returns the norm's new output name.
std::string write_fold(Writer& w) {
  const NormFoldMatch& m = w.m;
  // Y loses the affine: a new name for it, in the consumer's input and in
  // value_info too.
  auto& norm_node = const_cast<onnx::NodeProto&>(*m.norm);
  auto& consumer_node = const_cast<onnx::NodeProto&>(*m.consumer);
  const std::string old_y = norm_node.output(0);
  const std::string new_y = unique_name(w.names, old_y + "_normalized");
  norm_node.set_output(0, new_y);
  for (int i = 0; i < consumer_node.input_size(); ++i)
    if (consumer_node.input(i) == old_y) consumer_node.set_input(i, new_y);
  for (auto& vi : *w.graph().mutable_value_info())
    if (vi.name() == old_y) vi.set_name(new_y);
  const std::vector<double> s = per_feature(w.model, m.scale, m.per_group);
  const std::vector<double> b = m.bias ? per_feature(w.model, *m.bias, m.per_group) : std::vector<double>{};
  const Tensor wt = decode_as_saved(w.model, *m.weight.tensor);
  const LinearFold f = fold_affine_into_linear(s, b, wt.to_f64(), m.K, m.N, m.k_stride, m.j_stride);
  w.replace(*m.consumer, 1, &m.weight, Tensor::from_f64(wt.dtype, wt.dims, f.weight), "_folded");
  if (m.bias_nonzero) write_bias(w, f.bias, wt.dtype);
  const Tensor scale = decode_as_saved(w.model, *m.scale.tensor);
  w.replace(*m.norm, 1, &m.scale, Tensor::from_f64(scale.dtype, scale.dims, std::vector<double>(scale.numel(), 1.0)),
            "_ones");
  if (!m.bias) return new_y;
  auto& norm = const_cast<onnx::NodeProto&>(*m.norm);
  if (norm.op_type() == "LayerNormalization") {
    w.released.insert(norm.input(2));
    norm.mutable_input()->RemoveLast();  // B is LayerNormalization's last input
    return new_y;
  }
  const Tensor bias = decode_as_saved(w.model, *m.bias->tensor);
  w.replace(*m.norm, 2, &*m.bias, Tensor(bias.dtype, bias.dims), "_zeros");
  return new_y;
}

}  // namespace

namespace {

int position(const onnx::GraphProto& g, const onnx::NodeProto* n) {
  for (int k = 0; k < g.node_size(); ++k)
    if (&g.node(k) == n) return k;
  return -1;
}

bool needs_shapes(const GraphIndex& index) {
  for (const auto& s : index.scopes())
    for (const auto& n : s->graph->node()) {
      if (!is_affine_norm(n) || n.op_type() == "GroupNormalization") continue;
      for (const auto& a : n.attribute())
        if (a.name() == "axis" && a.i() != -1) return true;
    }
  return false;
}

NormFoldReport::Folded folded_entry(const NormFoldMatch& m, const std::string& label, int index) {
  const onnx::GraphProto& g = *m.scope->graph;
  NormFoldReport::Folded f{m.scope->path, m.norm->name(), m.norm->op_type(), label, index,
                           m.consumer->name(), consumer_name(m.kind), node_label(*m.consumer, position(g, m.consumer)),
                           "", m.consumer->output(0), m.norm->output(0), m.consumer->output(0)};
  if (m.bias_nonzero) {
    f.bias_into = m.kind == NormConsumer::gemm ? "C" : m.kind == NormConsumer::conv ? "B" :
                  node_label(*m.add, position(g, m.add));
    if (m.add) f.output = m.add->output(0);
  }
  return f;
}

}  // namespace

NormFoldReport fold_norm_affines(Model& model, const FoldOptions& options) {
  NormFoldReport report;
  const int64_t opset = default_opset(model.proto);
  const uint64_t model_bytes = stored_model_bytes(model);
  std::set<std::string> released;
  {
    const GraphIndex index(model.proto);
    std::unique_ptr<onnx::ModelProto> inferred;
    std::unique_ptr<GraphIndex> shapes;
    if (needs_shapes(index)) {
      inferred = std::make_unique<onnx::ModelProto>(with_all_inferred_shapes(model.proto));
      shapes = std::make_unique<GraphIndex>(*inferred);
    }
    std::set<std::string> names;
    for (const auto& s : index.scopes())
      for (const auto& [n, v] : s->values) names.insert(n);
    for (const auto& scope : index.scopes()) {
      for (int k = 0; k < scope->graph->node_size(); ++k) {
        const onnx::NodeProto& norm = scope->graph->node(k);
        if (!is_affine_norm(norm)) continue;
        ++report.total;
        const std::string label = node_label(norm, k);
        try {
          const NormFoldCandidate c = match_norm_fold(model, index, norm, opset, shapes.get());
          if (!c) {
            report.skipped.push_back({scope->path, norm.name(), norm.op_type(), label, c.reason, k});
            continue;
          }
          const NormFoldMatch& m = *c.match;
          const std::string generated = first_generated(
              index, {&m.scale, m.bias ? &*m.bias : nullptr, &m.weight, m.c ? &*m.c : nullptr});
          if (!generated.empty() && options.keep_generated) {
            report.skipped.push_back({scope->path, norm.name(), norm.op_type(), label,
                                      fmt::format("its weights are generated by {}; --keep-generated", generated), k});
            continue;
          }
          NormFoldReport::Folded entry = folded_entry(m, label, k);
          Writer w{model, index, m, names, released};
          entry.norm_output_after = write_fold(w);
          report.folded.push_back(std::move(entry));
          if (!generated.empty()) report.generated.push_back({scope->path, label, generated, w.new_bytes});
        } catch (Error& e) {
          e.at_node(label, norm.op_type(), op_version_at(norm.op_type(), opset)).context("while folding");
          throw;
        }
      }
    }
  }
  remove_released(model.proto, std::move(released));
  FoldReport sizes;
  sizes.generated = report.generated;
  add_generated_warnings(sizes, model_bytes);
  report.warnings = sizes.warnings;
  report.model_bytes_before = sizes.model_bytes_before;
  report.model_bytes_after = sizes.model_bytes_after;
  return report;
}

}  // namespace bnorm
