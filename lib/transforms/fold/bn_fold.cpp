#include "transforms/fold/bn_fold.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "kernels/affine.h"
#include "model/attrs.h"
#include "model/deferred.h"
#include "model/node_label.h"
#include "model/graph_index.h"
#include "model/shape_infer/shape_infer.h"
#include "model/tensor_proto.h"
#include "transforms/fold/generated.h"
#include "transforms/fold/bn_match.h"
#include "transforms/fold/bn_plan.h"

namespace bnorm {

namespace {

std::vector<double> affine_part(const std::vector<double>& s, const std::vector<double>& b,
                                const std::vector<double>& m, const std::vector<double>& v, double eps,
                                std::vector<double>& shift) {
  std::vector<double> scale(s.size());
  shift.resize(s.size());
  for (size_t c = 0; c < s.size(); ++c) {
    const auto a = kernels::to_affine<double>(s[c], b[c], m[c], v[c], eps);
    scale[c] = a.scale;
    shift[c] = a.shift;
  }
  return scale;
}

bool is_initializer(GraphIndex::ConstKind k) {
  return k == GraphIndex::ConstKind::initializer || k == GraphIndex::ConstKind::initializer_graph_input;
}



// Calls f(start, length, c) for runs of consecutive weight elements that
// all feed output channel c (the producer's output-channel axis), covering
// the whole weight in order.
template <typename F>
void for_each_weight_run(const FoldMatch& m, const std::vector<int64_t>& d, F&& f) {
  int64_t n = 1;
  for (auto x : d) n *= x;
  switch (m.kind) {
    case ProducerKind::conv: {  // W [C_out, C_in/group, k...]
      const int64_t block = n / d[0];
      for (int64_t c = 0; c < d[0]; ++c) f(c * block, block, c);
      break;
    }
    case ProducerKind::conv_transpose: {
      // W [C_in, C_out/group, k...]; input row r belongs to group r / (C_in/group).
      const int64_t per_out = d[1], kernel = n / (d[0] * d[1]), in_per_group = d[0] / m.group;
      for (int64_t r = 0; r < d[0]; ++r)
        for (int64_t j = 0; j < per_out; ++j) f((r * per_out + j) * kernel, kernel, (r / in_per_group) * per_out + j);
      break;
    }
    case ProducerKind::gemm:
    case ProducerKind::matmul: {  // [K, N], or [N, K] with transB
      const bool trans = m.kind == ProducerKind::gemm && attr_int(*m.producer, "transB", 0) != 0;
      for (int64_t r = 0; r < d[0]; ++r) {
        if (trans) f(r * d[1], d[1], r);
        else
          for (int64_t c = 0; c < d[1]; ++c) f(r * d[1] + c, 1, c);
      }
      break;
    }
  }
}

// W' = W * scale[c], in float64, rounded once to W's type.
Tensor scale_weight(const FoldMatch& m, const Tensor& w, const std::vector<double>& scale) {
  std::vector<double> v = w.to_f64();
  for_each_weight_run(m, w.dims, [&](int64_t start, int64_t len, int64_t c) {
    for (int64_t i = start; i < start + len; ++i) v[i] *= scale[c];
  });
  return Tensor::from_f64(w.dtype, w.dims, v);
}

// The same on float32 bytes in place (little-endian floats, as on every
// target bnorm builds for): the common case of large models, no copies.
void scale_f32_bytes(const FoldMatch& m, const std::vector<int64_t>& dims, char* p, const std::vector<double>& scale) {
  for_each_weight_run(m, dims, [&](int64_t start, int64_t len, int64_t c) {
    const double s = scale[c];
    for (int64_t i = start; i < start + len; ++i) {
      float x;
      std::memcpy(&x, p + i * 4, 4);
      x = static_cast<float>(static_cast<double>(x) * s);
      std::memcpy(p + i * 4, &x, 4);
    }
  });
}

bool scale_raw_f32_in_place(const FoldMatch& m, onnx::TensorProto& t, const std::vector<double>& scale) {
  if (t.data_type() != onnx::TensorProto::FLOAT || !t.has_raw_data() || is_external(t)) return false;
  const std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  if (t.raw_data().size() != static_cast<size_t>(checked_numel(dims)) * 4) return false;
  scale_f32_bytes(m, dims, t.mutable_raw_data()->data(), scale);
  return true;
}

// The new bias (Conv/ConvTranspose bias, Gemm C) and its dims.
std::vector<double> new_bias(const FoldMatch& m, const Tensor* old, const std::vector<double>& scale,
                             const std::vector<double>& shift, std::vector<int64_t>& dims, bool& set_beta_one) {
  const int64_t C = m.channels;
  double beta = 1.0;
  if (m.kind == ProducerKind::gemm) beta = attr_float(*m.producer, "beta", 1.0f);
  set_beta_one = m.kind == ProducerKind::gemm && beta == 0.0;
  if (set_beta_one || beta == 0.0) old = nullptr, beta = 1.0;  // beta = 0: C never counted
  if (!old) {
    dims = {C};
    std::vector<double> b(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) b[c] = shift[c] / beta;
    return b;
  }
  // C' = C * scale + shift / beta, broadcast to (rows of C) x [C].
  const std::vector<double> v = old->to_f64();
  const auto& od = old->dims;
  const int64_t rows = od.size() == 2 ? od[0] : 1;
  const int64_t cols = od.empty() ? 1 : od.back();
  dims = od.size() == 2 ? std::vector<int64_t>{rows, C} : std::vector<int64_t>{C};
  std::vector<double> out(static_cast<size_t>(rows * C));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < C; ++c) out[r * C + c] = v[r * cols + (cols == 1 ? 0 : c)] * scale[c] + shift[c] / beta;
  return out;
}

std::string unique_name(const std::set<std::string>& taken, const std::string& base) {
  if (!taken.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = fmt::format("{}_{}", base, i);
    if (!taken.count(n)) return n;
  }
}

}  // namespace

namespace {

// NaN variances, and var + epsilon <= 0 (a square root of a negative number,
// or a division by zero): not an error, BatchNormalization itself gives NaN
// or infinity there, but worth a warning.
std::string variance_warning(const std::vector<double>& var, float epsilon) {
  std::vector<size_t> bad;
  for (size_t i = 0; i < var.size(); ++i) {
    if (!(var[i] + static_cast<double>(epsilon) > 0)) bad.push_back(i);
  }
  if (bad.empty()) return {};
  std::vector<std::string> shown;
  for (size_t k = 0; k < bad.size() && k < 4; ++k) shown.push_back(fmt::format("{} at channel {}", var[bad[k]], bad[k]));
  return fmt::format("input_var + epsilon is NaN or not positive in {} of {} channels ({}{}): the folded weights are "
                     "NaN or infinite there, as the node's output is",
                     bad.size(), var.size(), fmt::join(shown, ", "), bad.size() > shown.size() ? ", ..." : "");
}

// Reads the constants of `m`, computes the folded tensors and records how
// they go into the model (in place, or fresh names).
// Registers W' = W * scale[c] as the rewrite of a weight whose data is not in
// memory (deferred or external), applied
// when the model is saved; the producer node is copied, the match's other
// pointers are not used by scale_weight.
bool scale_on_save(Model& model, const FoldMatch& m, const onnx::TensorProto& t, const std::vector<double>& scale) {
  if (!is_external(t)) return false;  // deferred, or in external data
  auto producer = std::make_shared<onnx::NodeProto>(*m.producer);
  FoldMatch match = m;
  match.producer = producer.get();
  const DType type = static_cast<DType>(t.data_type());
  const std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  model.rewrites[stored_data_key(t)] = [producer, match, type, dims, scale](std::vector<uint8_t>& bytes) {
    if (static_cast<uint64_t>(checked_numel(dims)) * dtype_size(type) != bytes.size()) {
      throw Error(ErrorKind::input, fmt::format("tensor of shape {} has {} bytes", shape_str(dims), bytes.size()));
    }
    if (type == DType::float32) return scale_f32_bytes(match, dims, reinterpret_cast<char*>(bytes.data()), scale);
    Tensor w;
    w.dtype = type;
    w.dims = dims;
    w.bytes = std::move(bytes);
    bytes = scale_weight(match, w, scale).bytes;
  };
  return true;
}

FoldPlan plan_fold(Model& model, const GraphIndex& index, const FoldMatch& m, std::set<std::string>& names,
                   bool rewrite_on_save, bool& weight_done) {
  const onnx::NodeProto& bn = *m.bn;
  FoldPlan p;
  p.graph_path = m.scope->path;
  p.graph = const_cast<onnx::GraphProto*>(m.scope->graph);
  for (int k = 0; k < p.graph->node_size(); ++k) {
    if (&p.graph->node(k) == m.bn) p.bn_index = k;
    if (&p.graph->node(k) == m.producer) p.producer_index = k;
  }
  p.kind = m.kind;
  p.bn_name = bn.name();
  p.bn_output = bn.output(0);
  p.producer_name = m.producer->name();
  p.producer_output = m.producer->output(0);
  const auto dir = model.dir();
  std::vector<double> shift;
  const auto var = decode_tensor(*m.var.tensor, dir).to_f64();
  p.warning = variance_warning(var, m.norm.epsilon);
  const auto scale = affine_part(decode_tensor(*m.scale.tensor, dir).to_f64(), decode_tensor(*m.B.tensor, dir).to_f64(),
                                 decode_tensor(*m.mean.tensor, dir).to_f64(), var, m.norm.epsilon, shift);
  // In place when only this producer uses the tensor, in its own graph.
  auto sole_user = [&](const std::string& name, GraphIndex::ConstKind kind) {
    const auto* v = index.find(*m.scope, name);
    return is_initializer(kind) && v && v->uses.size() == 1 && v->scope == m.scope;
  };
  const std::string& w_name = m.producer->input(1);
  p.weight_in_place = sole_user(w_name, m.weight.kind);
  auto& w_proto = const_cast<onnx::TensorProto&>(*m.weight.tensor);
  weight_done = p.weight_in_place && ((rewrite_on_save && scale_on_save(model, m, w_proto, scale)) ||
                                      scale_raw_f32_in_place(m, w_proto, scale));
  DType w_type = static_cast<DType>(m.weight.tensor->data_type());
  if (!weight_done) p.weight = scale_weight(m, decode_tensor(*m.weight.tensor, dir), scale);
  p.weight_name = p.weight_in_place ? w_name : unique_name(names, w_name + "_folded_" + bn.name());
  names.insert(p.weight_name);

  Tensor old_bias;
  if (m.bias) old_bias = decode_tensor(*m.bias->tensor, dir);
  std::vector<int64_t> bias_dims;
  const auto b = new_bias(m, m.bias ? &old_bias : nullptr, scale, shift, bias_dims, p.set_beta_one);
  p.bias = Tensor::from_f64(m.bias ? old_bias.dtype : w_type, bias_dims, b);
  p.bias_in_place = m.bias && sole_user(m.producer->input(2), m.bias->kind) && old_bias.dims == bias_dims;
  p.bias_name = p.bias_in_place ? m.producer->input(2)
                                : unique_name(names, (p.producer_name.empty() ? p.producer_output : p.producer_name) +
                                                         "_bias_folded");
  names.insert(p.bias_name);
  for (int k = 1; k < bn.input_size(); ++k) p.released.push_back(bn.input(k));
  if (!p.weight_in_place) p.released.push_back(w_name);
  if (m.bias && !p.bias_in_place) p.released.push_back(m.producer->input(2));
  return p;
}

}  // namespace

void add_generated_warnings(FoldReport& report, uint64_t model_bytes) {
  if (report.generated.empty()) return;
  uint64_t added = 0;
  for (const auto& g : report.generated) added += g.new_bytes;
  report.model_bytes_before = model_bytes;
  report.model_bytes_after = model_bytes + added;
  for (const auto& g : report.generated) {
    report.warnings.push_back(fmt::format(
        "node '{}': its weights are generated by {}; folding writes them out as {} of new initializers, "
        "so the model grows from about {} to about {} (--keep-generated leaves such nodes unfolded)",
        g.node_label, g.source, size_text(g.new_bytes), size_text(report.model_bytes_before),
        size_text(report.model_bytes_after)));
  }
}

namespace {

bool needs_shapes(const GraphIndex& index) {
  for (const auto& s : index.scopes())
    for (const auto& n : s->graph->node()) {
      if (n.op_type() != "BatchNormalization" || n.input_size() == 0) continue;
      const auto* x = index.find(*s, n.input(0));
      if (x && x->producer && x->producer->op_type() == "MatMul") return true;
    }
  return false;
}

}  // namespace

FoldReport fold_batch_norms(Model& model, const FoldOptions& options) {
  FoldReport report;
  const int64_t opset = default_opset(model.proto);
  FoldFinish finish;
  const uint64_t model_bytes = stored_model_bytes(model);
  {
    const GraphIndex index(model.proto);
    // Only MatMul needs a shape (its input's rank): infer shapes on a copy
    // only then, as the copy costs a second model in memory.
    std::unique_ptr<onnx::ModelProto> inferred;
    std::unique_ptr<GraphIndex> shapes;
    if (needs_shapes(index)) {
      inferred = std::make_unique<onnx::ModelProto>(with_all_inferred_shapes(model.proto));
      shapes = std::make_unique<GraphIndex>(*inferred);
    }
    std::set<std::string> names;  // every value name, for fresh names
    for (const auto& s : index.scopes())
      for (const auto& [n, v] : s->values) names.insert(n);
    for (const auto& scope : index.scopes()) {
      for (int bn_index = 0; bn_index < scope->graph->node_size(); ++bn_index) {
        const onnx::NodeProto& bn = scope->graph->node(bn_index);
        if (!is_default_domain(bn.domain()) || bn.op_type() != "BatchNormalization") continue;
        const std::string label = node_label(bn, bn_index);
        ++report.total;
        try {
          const FoldCandidate c = match_fold(index, bn, opset, shapes.get());
          if (!c) {
            report.skipped.push_back({scope->path, bn.name(), c.reason, label, bn_index});
            continue;
          }
          const FoldMatch& m = *c.match;
          const std::string generated =
              first_generated(index, {&m.weight, m.bias ? &*m.bias : nullptr, &m.scale, &m.B, &m.mean, &m.var});
          if (!generated.empty() && options.keep_generated) {
            report.skipped.push_back({scope->path, bn.name(),
                                      fmt::format("its weights are generated by {}; --keep-generated", generated),
                                      label, bn_index});
            continue;
          }
          bool weight_done = false;
          FoldPlan p = plan_fold(model, index, m, names, options.rewrite_on_save, weight_done);
          if (!generated.empty()) {
            const uint64_t bytes = (p.weight_in_place ? 0 : p.weight.bytes.size()) +
                                   (p.bias_in_place ? 0 : p.bias.bytes.size());
            report.generated.push_back({scope->path, label, generated, bytes});
          }
          // Labelled as in the input model: apply_fold renames the producer's output.
          const std::string producer_label = node_label(*c.match->producer, p.producer_index);
          // Written now, one fold at a time, so at most one fold's new
          // tensors exist besides the model; removals wait for the end.
          apply_fold(model, p, opset, weight_done, finish);
          report.folded.push_back({scope->path, bn.name(), p.producer_name, producer_name(c.match->kind), p.bn_output,
                                   label, producer_label, bn_index});
          if (!p.warning.empty()) report.warnings.push_back(fmt::format("node '{}': {}", label, p.warning));
        } catch (Error& e) {
          e.at_node(label, bn.op_type(), norm_schema_version(bn.op_type(), opset)).context("while folding");
          throw;
        }
      }
    }
  }
  finish_folds(model, finish);
  add_generated_warnings(report, model_bytes);
  return report;
}

}  // namespace bnorm
