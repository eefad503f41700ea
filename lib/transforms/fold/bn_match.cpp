#include "transforms/fold/bn_match.h"

#include <fmt/format.h>

#include "core/error.h"
#include "model/attrs.h"
#include "model/tensor.h"
#include "model/node_label.h"

namespace bnorm {

namespace {

FoldCandidate no(std::string reason) { return FoldCandidate{std::nullopt, std::move(reason)}; }


std::optional<ProducerKind> producer_kind(const onnx::NodeProto& n) {
  if (!is_default_domain(n.domain())) return std::nullopt;
  if (n.op_type() == "Conv") return ProducerKind::conv;
  if (n.op_type() == "ConvTranspose") return ProducerKind::conv_transpose;
  if (n.op_type() == "Gemm") return ProducerKind::gemm;
  if (n.op_type() == "MatMul") return ProducerKind::matmul;
  return std::nullopt;
}

bool floating(const onnx::TensorProto& t) { return is_floating(static_cast<DType>(t.data_type())); }

std::vector<int64_t> dims_of(const onnx::TensorProto& t) { return {t.dims().begin(), t.dims().end()}; }

// Output channels of the producer from its weight, or a reason.
std::optional<int64_t> producer_channels(const FoldMatch& m, std::string& why) {
  const auto w = dims_of(*m.weight.tensor);
  switch (m.kind) {
    case ProducerKind::conv:
      if (w.size() < 3) why = fmt::format("Conv weight has shape {}, expected rank 3 to 5", shape_str(w));
      else return w[0];
      break;
    case ProducerKind::conv_transpose:
      if (w.size() < 3) why = fmt::format("ConvTranspose weight has shape {}, expected rank 3 to 5", shape_str(w));
      else if (m.group < 1 || w[0] % m.group != 0) why = fmt::format("ConvTranspose group {} does not divide {}", m.group, w[0]);
      else return w[1] * m.group;
      break;
    case ProducerKind::gemm:
      if (w.size() != 2) why = fmt::format("Gemm B has shape {}, expected rank 2", shape_str(w));
      else return attr_int(*m.producer, "transB", 0) ? w[0] : w[1];
      break;
    case ProducerKind::matmul:
      if (w.size() != 2) why = fmt::format("MatMul weight has shape {}, expected rank 2", shape_str(w));
      else return w[1];
      break;
  }
  return std::nullopt;
}

std::optional<int64_t> known_rank(const GraphIndex& index, const GraphIndex::Scope& scope, const std::string& name) {
  const onnx::TypeProto* t = index.declared_type(scope, name);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  return t->tensor_type().shape().dim_size();
}

}  // namespace

std::string producer_name(ProducerKind k) {
  switch (k) {
    case ProducerKind::conv: return "Conv";
    case ProducerKind::conv_transpose: return "ConvTranspose";
    case ProducerKind::gemm: return "Gemm";
    case ProducerKind::matmul: return "MatMul";
  }
  return "?";
}

FoldCandidate match_fold(const GraphIndex& index, const onnx::NodeProto& bn, int64_t opset,
                         const GraphIndex* shapes) {
  if (!is_default_domain(bn.domain()) || bn.op_type() != "BatchNormalization") return no("not a BatchNormalization");
  FoldMatch m;
  m.bn = &bn;
  m.norm = read_norm_node(bn, opset);
  if (m.norm.training) return no("training mode (" + m.norm.mode_reason + ")");
  if (!m.norm.spatial) return no("spatial = 0 (per-element parameters)");
  if (bn.input_size() != 5) return no(fmt::format("{} inputs, expected 5", bn.input_size()));
  if (bn.output_size() < 1 || bn.output(0).empty()) return no("BN names no output Y");
  m.scope = &index.scope_of(&bn);

  const GraphIndex::Value* x = index.find(*m.scope, bn.input(0));
  if (!x || !x->producer) return no("X is not produced by a node");
  if (x->scope != m.scope) return no("X comes from an enclosing graph");
  m.producer = x->producer;
  const auto kind = producer_kind(*m.producer);
  if (!kind) return no(fmt::format("X is produced by {}, not Conv, ConvTranspose, Gemm or MatMul", m.producer->op_type()));
  m.kind = *kind;
  const std::string pname = producer_name(m.kind);
  if (x->graph_output) return no(fmt::format("{} output '{}' is a graph output", pname, x->name));
  if (x->uses.size() != 1) return no(fmt::format("{} output '{}' has {} consumers", pname, x->name, x->uses.size()));

  // Parameters.
  const char* names[] = {"scale", "B", "mean", "var"};
  GraphIndex::Constant* slots[] = {&m.scale, &m.B, &m.mean, &m.var};
  for (int i = 0; i < 4; ++i) {
    auto c = index.constant(*m.scope, bn.input(i + 1));
    if (!c) return no(fmt::format("BN input '{}' ({}) is not a constant", bn.input(i + 1), names[i]));
    if (!floating(*c->tensor)) return no(fmt::format("BN input '{}' is not a floating-point tensor", names[i]));
    *slots[i] = *c;
  }

  // Producer weights.
  if (m.producer->input_size() < 2) return no(pname + " has no weight input");
  auto w = index.constant(*m.scope, m.producer->input(1));
  if (!w) return no(fmt::format("{} weight '{}' is not a constant", pname, m.producer->input(1)));
  if (!floating(*w->tensor)) return no(pname + " weight is not a floating-point tensor");
  m.weight = *w;
  if (m.producer->input_size() > 2 && !m.producer->input(2).empty()) {
    if (m.kind == ProducerKind::matmul) return no("MatMul has more than two inputs");
    auto b = index.constant(*m.scope, m.producer->input(2));
    if (!b) return no(fmt::format("{} {} '{}' is not a constant", pname, m.kind == ProducerKind::gemm ? "C" : "bias",
                                  m.producer->input(2)));
    if (!floating(*b->tensor)) return no(pname + " bias is not a floating-point tensor");
    m.bias = *b;
  }
  if (m.kind == ProducerKind::conv || m.kind == ProducerKind::conv_transpose) m.group = attr_int(*m.producer, "group", 1);
  if (m.kind == ProducerKind::matmul) {
    const GraphIndex& si = shapes ? *shapes : index;
    const GraphIndex::Scope* ss = m.scope;
    for (const auto& s : si.scopes())
      if (s->path == m.scope->path) ss = s.get();
    const auto rank = known_rank(si, *ss, m.producer->input(0));
    if (!rank) return no("MatMul input rank is unknown (BN needs it 2-D)");
    if (*rank != 2) return no(fmt::format("MatMul input has rank {}, expected 2", *rank));
  }

  std::string why;
  const auto channels = producer_channels(m, why);
  if (!channels) return no(why);
  m.channels = *channels;
  for (int i = 0; i < 4; ++i) {
    // [C]; a scalar is accepted as [1] (Constant value_float, C = 1).
    const auto d = dims_of(*slots[i]->tensor);
    const bool ok = d.size() == 1 ? d[0] == m.channels : d.empty() && m.channels == 1;
    if (checked_numel(d) != m.channels) {
      // Not a case fold declines: the model is invalid (BN's parameters have C elements).
      Error e(ErrorKind::input, fmt::format("input '{}' has shape {}, but X has {} channels ({} '{}' makes {})",
                                            names[i], shape_str(d), m.channels, pname, m.producer->name(),
                                            m.channels));
      e.at_node(node_label(bn), bn.op_type(), m.norm.version);
      throw e;
    }
    if (!ok) {
      return no(fmt::format("BN {} has shape {}, {} has {} output channels", names[i], shape_str(d), pname,
                            m.channels));
    }
  }
  if (m.bias && m.kind != ProducerKind::gemm) {
    const auto d = dims_of(*m.bias->tensor);
    if (d.size() != 1 || d[0] != m.channels) {
      return no(fmt::format("{} bias has shape {}, expected [{}]", pname, shape_str(d), m.channels));
    }
  }
  if (m.bias && m.kind == ProducerKind::gemm) {
    const auto d = dims_of(*m.bias->tensor);
    if (d.size() > 2 || (!d.empty() && d.back() != 1 && d.back() != m.channels)) {
      return no(fmt::format("Gemm C has shape {}, which does not broadcast to [M, {}]", shape_str(d), m.channels));
    }
  }
  return FoldCandidate{std::move(m), {}};
}

}  // namespace bnorm
