#include "transforms/fold/norm_affine_match.h"

#include <fmt/format.h>

#include "model/attrs.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/tensor.h"
#include "model/tensor_proto.h"

namespace bnorm {

namespace {

NormFoldCandidate no(std::string reason) { return NormFoldCandidate{std::nullopt, std::move(reason)}; }

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}


std::vector<int64_t> dims_of(const onnx::TensorProto& t) { return {t.dims().begin(), t.dims().end()}; }

bool floating(const GraphIndex::Constant& c) { return is_floating(static_cast<DType>(c.tensor->data_type())); }

// A floating constant input `name` of the scope, or a reason.
std::string constant_input(const GraphIndex& index, const GraphIndex::Scope& scope, const std::string& name,
                           const std::string& what, GraphIndex::Constant& out) {
  auto c = index.constant(scope, name);
  if (!c) return fmt::format("{} '{}' is not a constant", what, name);
  if (!floating(*c)) return fmt::format("{} '{}' is not a floating-point tensor", what, name);
  out = *c;
  return {};
}

// Shape [..1, n] or [..1, 1] or a scalar: `n` values along the last axis.
bool last_axis_vector(const std::vector<int64_t>& d, int64_t n) {
  for (size_t i = 0; i + 1 < d.size(); ++i)
    if (d[i] != 1) return false;
  return d.empty() || d.back() == 1 || d.back() == n;
}

std::string match_gemm(const GraphIndex& index, NormFoldMatch& m) {
  const onnx::NodeProto& g = *m.consumer;
  if (g.input(0) != m.norm->output(0)) return "the norm's output is not Gemm's A";
  if (attr_int(g, "transA", 0) != 0) return "Gemm has transA = 1 (it reads the normalized axis as rows)";
  if (g.input_size() < 2) return "Gemm has no B";
  if (auto why = constant_input(index, *m.scope, g.input(1), "Gemm B", m.weight); !why.empty()) return why;
  const auto w = dims_of(*m.weight.tensor);
  if (w.size() != 2) return fmt::format("Gemm B has shape {}, expected rank 2", shape_str(w));
  const bool trans = attr_int(g, "transB", 0) != 0;
  m.K = trans ? w[1] : w[0];
  m.N = trans ? w[0] : w[1];
  m.k_stride = trans ? 1 : m.N;
  m.j_stride = trans ? m.K : 1;
  if (g.input_size() > 2 && !g.input(2).empty()) {
    GraphIndex::Constant c;
    if (auto why = constant_input(index, *m.scope, g.input(2), "Gemm C", c); !why.empty()) return why;
    const auto d = dims_of(*c.tensor);
    if (d.size() > 2 || (!d.empty() && d.back() != 1 && d.back() != m.N)) {
      return fmt::format("Gemm C has shape {}, which does not broadcast to [M, {}]", shape_str(d), m.N);
    }
    m.c = c;
  }
  return {};
}

// MatMul's bias place: the Add that alone reads its output, with a constant
// other operand of N values along the last axis. Not finding one is no reason
// yet: a norm without bias needs none.
void find_add(const GraphIndex& index, NormFoldMatch& m) {
  const GraphIndex::Value* z = index.find(*m.scope, m.consumer->output(0));
  if (!z || z->graph_output || z->uses.size() != 1 || z->uses[0].scope != m.scope) return;
  const onnx::NodeProto& add = *z->uses[0].node;
  if (!is_default_domain(add.domain()) || add.op_type() != "Add" || add.input_size() != 2) return;
  const int other = add.input(0) == z->name ? 1 : 0;
  if (add.input(other) == z->name) return;
  GraphIndex::Constant c;
  if (!constant_input(index, *m.scope, add.input(other), "Add", c).empty()) return;
  if (!last_axis_vector(dims_of(*c.tensor), m.N)) return;
  m.add = &add;
  m.add_input = other;
  m.c = c;
}

std::string match_matmul(const GraphIndex& index, NormFoldMatch& m) {
  const onnx::NodeProto& mm = *m.consumer;
  if (mm.input_size() != 2 || mm.input(0) != m.norm->output(0)) return "the norm's output is MatMul's second input";
  if (auto why = constant_input(index, *m.scope, mm.input(1), "MatMul weight", m.weight); !why.empty()) return why;
  const auto w = dims_of(*m.weight.tensor);
  if (w.size() != 2) return fmt::format("MatMul weight has shape {}, expected rank 2", shape_str(w));
  m.K = w[0];
  m.N = w[1];
  m.k_stride = m.N;
  m.j_stride = 1;
  if (mm.output_size() == 1) find_add(index, m);
  return {};
}

std::string match_conv(const GraphIndex& index, NormFoldMatch& m) {
  const onnx::NodeProto& cv = *m.consumer;
  if (cv.input_size() < 2 || cv.input(0) != m.norm->output(0)) return "the norm's output is not Conv's X";
  if (attr_int(cv, "group", 1) != 1) return "Conv has group != 1";
  if (const auto* pads = attr(cv, "pads"))
    for (auto p : pads->ints())
      if (p != 0) return "Conv pads its input (a bias folded into W would reach the padding)";
  if (auto why = constant_input(index, *m.scope, cv.input(1), "Conv weight", m.weight); !why.empty()) return why;
  const auto w = dims_of(*m.weight.tensor);
  if (w.size() < 3) return fmt::format("Conv weight has shape {}, expected rank 3 or more", shape_str(w));
  for (size_t i = 2; i < w.size(); ++i)
    if (w[i] != 1) return fmt::format("Conv kernel is {}, not 1x1", shape_str({w.begin() + 2, w.end()}));
  m.K = w[1];
  m.N = w[0];
  m.k_stride = 1;
  m.j_stride = m.K;
  if (cv.input_size() > 2 && !cv.input(2).empty()) {
    GraphIndex::Constant c;
    if (auto why = constant_input(index, *m.scope, cv.input(2), "Conv bias", c); !why.empty()) return why;
    if (dims_of(*c.tensor) != std::vector<int64_t>{m.N}) return "Conv bias is not [" + std::to_string(m.N) + "]";
    m.c = c;
  }
  return {};
}

std::optional<int64_t> known_rank(const GraphIndex* shapes, const GraphIndex::Scope& scope, const std::string& x) {
  if (!shapes) return std::nullopt;
  for (const auto& s : shapes->scopes()) {
    if (s->path != scope.path) continue;
    const onnx::TypeProto* t = shapes->declared_type(*s, x);
    if (t && t->has_tensor_type() && t->tensor_type().has_shape()) return t->tensor_type().shape().dim_size();
  }
  return std::nullopt;
}

// LayerNormalization/RMSNormalization: the last axis only.
std::string check_axis(const NormFoldMatch& m, const GraphIndex* shapes) {
  const int64_t axis = attr_int(*m.norm, "axis", -1);
  if (axis == -1) return {};
  const auto rank = known_rank(shapes, *m.scope, m.norm->input(0));
  if (axis < -1) return fmt::format("axis = {} normalizes more than the last axis", axis);
  if (!rank) return fmt::format("axis = {} and X's rank is unknown (the fold needs the last axis only)", axis);
  if (axis != *rank - 1) return fmt::format("axis = {} normalizes more than the last axis of rank {}", axis, *rank);
  return {};
}

}  // namespace

bool is_affine_norm(const onnx::NodeProto& n) {
  return is_default_domain(n.domain()) &&
         (n.op_type() == "LayerNormalization" || n.op_type() == "RMSNormalization" ||
          n.op_type() == "GroupNormalization");
}

std::string consumer_name(NormConsumer k) {
  switch (k) {
    case NormConsumer::gemm: return "Gemm";
    case NormConsumer::matmul: return "MatMul";
    case NormConsumer::conv: return "Conv";
  }
  return "?";
}

namespace {

// Scale and bias against the consumer's K input features.
std::string match_params(const Model& model, const GraphIndex& index, NormFoldMatch& m) {
  const onnx::NodeProto& n = *m.norm;
  if (auto why = constant_input(index, *m.scope, n.input(1), "scale", m.scale); !why.empty()) return why;
  const bool has_bias = n.input_size() > 2 && !n.input(2).empty();
  if (has_bias) {
    GraphIndex::Constant b;
    if (auto why = constant_input(index, *m.scope, n.input(2), "bias", b); !why.empty()) return why;
    m.bias = b;
  }
  std::vector<const GraphIndex::Constant*> params{&m.scale};
  if (m.bias) params.push_back(&*m.bias);
  const bool group18 = n.op_type() == "GroupNormalization" && m.version < 21;
  int64_t want = m.K;
  if (group18) {
    const int64_t groups = attr_int(n, "num_groups", 0);
    if (groups < 1 || m.K % groups != 0) return fmt::format("num_groups {} does not divide {} channels", groups, m.K);
    want = groups;
    m.per_group = m.K / groups;
  }
  for (const auto* p : params) {
    const auto d = dims_of(*p->tensor);
    const bool ok = n.op_type() == "GroupNormalization" ? d == std::vector<int64_t>{want} : last_axis_vector(d, m.K);
    if (!ok) {
      return fmt::format("{} has shape {}, {} '{}' reads {} input features", p == &m.scale ? "scale" : "bias",
                         shape_str(d), consumer_name(m.kind), m.consumer->name(), m.K);
    }
  }
  if (m.bias) {
    for (double v : decode_as_saved(model, *m.bias->tensor).to_f64())
      if (v != 0) m.bias_nonzero = true;
  }
  return {};
}

}  // namespace

NormFoldCandidate match_norm_fold(const Model& model, const GraphIndex& index, const onnx::NodeProto& norm,
                                  int64_t opset, const GraphIndex* shapes) {
  if (!is_affine_norm(norm)) return no("not LayerNormalization, RMSNormalization or GroupNormalization");
  NormFoldMatch m;
  m.norm = &norm;
  m.version = op_version_at(norm.op_type(), opset);
  if (m.version == 0) return no(fmt::format("{} does not exist at opset {}", norm.op_type(), opset));
  if (norm.input_size() < 2 || norm.input(1).empty()) return no("no scale input");
  if (norm.output_size() < 1 || norm.output(0).empty()) return no("names no output Y");
  m.scope = &index.scope_of(&norm);
  const bool group = norm.op_type() == "GroupNormalization";
  if (!group) {
    if (auto why = check_axis(m, shapes); !why.empty()) return no(why);
  }
  const GraphIndex::Value* y = index.find(*m.scope, norm.output(0));
  if (!y) return no("names no output Y");
  if (y->graph_output) return no(fmt::format("output '{}' is a graph output", y->name));
  if (y->uses.size() != 1) return no(fmt::format("output '{}' has {} consumers", y->name, y->uses.size()));
  if (y->uses[0].scope != m.scope) return no(fmt::format("output '{}' is read inside a subgraph", y->name));
  m.consumer = y->uses[0].node;
  const onnx::NodeProto& c = *m.consumer;
  const std::string& op = c.op_type();
  const bool linear = is_default_domain(c.domain()) && (op == "Gemm" || op == "MatMul");
  const bool conv = is_default_domain(c.domain()) && op == "Conv";
  if (!group && !linear) return no(fmt::format("output '{}' is read by {}, not Gemm or MatMul", y->name, op));
  if (group && !conv) return no(fmt::format("output '{}' is read by {}, not a 1x1 Conv", y->name, op));
  m.kind = op == "Gemm" ? NormConsumer::gemm : op == "MatMul" ? NormConsumer::matmul : NormConsumer::conv;
  std::string why = m.kind == NormConsumer::gemm     ? match_gemm(index, m)
                    : m.kind == NormConsumer::matmul ? match_matmul(index, m)
                                                     : match_conv(index, m);
  if (!why.empty()) return no(why);
  if (auto p = match_params(model, index, m); !p.empty()) return no(p);
  if (m.kind == NormConsumer::matmul && m.bias_nonzero && !m.add) {
    return no("MatMul has no bias for bias*W (its output is not read by one Add of a constant)");
  }
  return NormFoldCandidate{std::move(m), {}};
}

}  // namespace bnorm
