#include "transforms/fold.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>

#include "core/error.h"
#include "kernels/affine.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "model/tensor_proto.h"
#include "transforms/fold_match.h"
#include "transforms/fold_plan.h"

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

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return dflt;
}

float float_attr(const onnx::NodeProto& n, const std::string& name, float dflt) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.f();
  }
  return dflt;
}

// W' = W scaled along the producer's output-channel axis.
std::vector<double> scale_weight(const FoldMatch& m, const Tensor& w, const std::vector<double>& scale) {
  std::vector<double> out = w.to_f64();
  const auto& d = w.dims;
  const int64_t C = m.channels;
  switch (m.kind) {
    case ProducerKind::conv: {
      const int64_t block = w.numel() / d[0];
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < block; ++i) out[c * block + i] *= scale[c];
      break;
    }
    case ProducerKind::conv_transpose: {
      // W [C_in, C_out/group, k...]; input row r belongs to group r / (C_in/group).
      const int64_t per_out = d[1], kernel = w.numel() / (d[0] * d[1]), in_per_group = d[0] / m.group;
      for (int64_t r = 0; r < d[0]; ++r)
        for (int64_t j = 0; j < per_out; ++j) {
          const double s = scale[(r / in_per_group) * per_out + j];
          for (int64_t k = 0; k < kernel; ++k) out[(r * per_out + j) * kernel + k] *= s;
        }
      break;
    }
    case ProducerKind::gemm:
    case ProducerKind::matmul: {
      const bool trans = m.kind == ProducerKind::gemm && int_attr(*m.producer, "transB", 0) != 0;
      for (int64_t r = 0; r < d[0]; ++r)
        for (int64_t c = 0; c < d[1]; ++c) out[r * d[1] + c] *= scale[trans ? r : c];
      break;
    }
  }
  return out;
}

// The new bias (Conv/ConvTranspose bias, Gemm C) and its dims.
std::vector<double> new_bias(const FoldMatch& m, const Tensor* old, const std::vector<double>& scale,
                             const std::vector<double>& shift, std::vector<int64_t>& dims, bool& set_beta_one) {
  const int64_t C = m.channels;
  double beta = 1.0;
  if (m.kind == ProducerKind::gemm) beta = float_attr(*m.producer, "beta", 1.0f);
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

FoldReport fold_batch_norms(Model& model) {
  FoldReport report;
  const int64_t opset = default_opset(model.proto);
  std::vector<FoldPlan> plans;
  std::set<std::string> names;  // every value name, for fresh names
  {
    // MatMul needs its input rank: match on a copy with inferred shapes,
    // then find the same nodes by position in the real model.
    const onnx::ModelProto inferred = with_inferred_shapes(model.proto);
    const GraphIndex index(inferred);
    const GraphIndex real(model.proto);
    for (const auto& s : real.scopes())
      for (const auto& [n, v] : s->values) names.insert(n);
    for (size_t si = 0; si < index.scopes().size(); ++si) {
      const auto& scope = *index.scopes()[si];
      const auto& real_scope = *real.scopes()[si];
      for (int ni = 0; ni < scope.graph->node_size(); ++ni) {
        const onnx::NodeProto& bn = scope.graph->node(ni);
        if (!is_default_domain(bn.domain()) || bn.op_type() != "BatchNormalization") continue;
        ++report.total;
        FoldCandidate c;
        try {
          c = match_fold(index, bn, opset);
        } catch (Error& e) {
          e.at_node(bn.name(), bn.op_type(), norm_schema_version(bn.op_type(), opset));
          throw;
        }
        if (!c) {
          report.skipped.push_back({scope.path, bn.name(), c.reason});
          continue;
        }
        const FoldMatch& m = *c.match;
        FoldPlan p;
        p.graph_path = scope.path;
        p.graph = const_cast<onnx::GraphProto*>(real_scope.graph);
        p.bn_index = ni;
        for (int k = 0; k < scope.graph->node_size(); ++k)
          if (&scope.graph->node(k) == m.producer) p.producer_index = k;
        p.kind = m.kind;
        p.bn_name = bn.name();
        p.bn_output = bn.output(0);
        p.producer_name = m.producer->name();
        p.producer_output = m.producer->output(0);
        try {
          const auto dir = model.dir();
          std::vector<double> shift;
          const auto scale = affine_part(decode_tensor(*m.scale.tensor, dir).to_f64(), decode_tensor(*m.B.tensor, dir).to_f64(),
                                         decode_tensor(*m.mean.tensor, dir).to_f64(), decode_tensor(*m.var.tensor, dir).to_f64(),
                                         m.norm.epsilon, shift);
          const Tensor w = decode_tensor(*m.weight.tensor, dir);
          p.weight = Tensor::from_f64(w.dtype, w.dims, scale_weight(m, w, scale));
          Tensor old_bias;
          if (m.bias) old_bias = decode_tensor(*m.bias->tensor, dir);
          std::vector<int64_t> bias_dims;
          const auto b = new_bias(m, m.bias ? &old_bias : nullptr, scale, shift, bias_dims, p.set_beta_one);
          p.bias = Tensor::from_f64(m.bias ? old_bias.dtype : w.dtype, bias_dims, b);
          // In place when only this producer uses the tensor and the shape stays.
          const auto* wv = real.find(real_scope, m.producer->input(1));
          p.weight_in_place = is_initializer(m.weight.kind) && wv && wv->uses.size() == 1 &&
                              wv->scope == &real_scope;
          p.weight_name = p.weight_in_place ? m.producer->input(1)
                                            : unique_name(names, m.producer->input(1) + "_folded_" + bn.name());
          names.insert(p.weight_name);
          if (m.bias) {
            const auto* bv = real.find(real_scope, m.producer->input(2));
            p.bias_in_place = is_initializer(m.bias->kind) && bv && bv->uses.size() == 1 &&
                              bv->scope == &real_scope && old_bias.dims == bias_dims;
          }
          p.bias_name = p.bias_in_place ? m.producer->input(2)
                                        : unique_name(names, (p.producer_name.empty() ? p.producer_output : p.producer_name) + "_bias_folded");
          names.insert(p.bias_name);
          for (int k = 1; k < bn.input_size(); ++k) p.released.push_back(bn.input(k));
          if (!p.weight_in_place) p.released.push_back(m.producer->input(1));
          if (m.bias && !p.bias_in_place) p.released.push_back(m.producer->input(2));
        } catch (Error& e) {
          e.at_node(bn.name(), bn.op_type(), m.norm.version).context("while folding into " + producer_name(m.kind));
          throw;
        }
        report.folded.push_back({scope.path, bn.name(), p.producer_name, producer_name(m.kind), p.bn_output});
        plans.push_back(std::move(p));
      }
    }
  }
  apply_fold_plans(model, plans, opset);
  return report;
}

}  // namespace bnorm
