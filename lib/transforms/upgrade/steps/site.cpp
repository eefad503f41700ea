#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include "core/error.h"
#include "model/attrs.h"
#include "model/model_walk.h"
#include "model/node_label.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

NormNode NormSite::read() const { return read_norm_node(node, version); }

std::string NormSite::label() const {
  return fmt::format("node '{}' ({}-{})", node.name(), node.op_type(), version);
}

std::string NormSite::stem() const { return node.name().empty() ? node.op_type() : node.name(); }

std::string NormSite::fresh(const std::string& stem) {
  std::string name = stem;
  for (int i = 1; env->names.count(name); ++i) name = fmt::format("{}_{}", stem, i);
  env->names.insert(name);
  return name;
}

namespace {

const onnx::TypeProto_Tensor* tensor_type(const NormSite& s, const std::string& value) {
  if (!s.env->index || !s.scope) return nullptr;
  const onnx::TypeProto* t = s.env->index->declared_type(*s.scope, value);
  if (!t || !t->has_tensor_type()) return nullptr;
  return &t->tensor_type();
}

}  // namespace

std::optional<DType> NormSite::type_of(const std::string& value) const {
  if (auto it = new_types.find(value); it != new_types.end()) return it->second;
  const auto* t = tensor_type(*this, value);
  if (!t || t->elem_type() == 0) return std::nullopt;
  return static_cast<DType>(t->elem_type());
}

std::optional<std::vector<int64_t>> NormSite::dims_of(const std::string& value) const {
  if (new_types.count(value)) return std::nullopt;  // made by a step: only its rank is known
  if (env->index && scope) {
    if (auto c = env->index->constant(*scope, value)) {
      return std::vector<int64_t>(c->tensor->dims().begin(), c->tensor->dims().end());
    }
  }
  const auto* t = tensor_type(*this, value);
  if (!t || !t->has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : t->shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

namespace {

// Ops whose first output has the rank of their first input.
bool keeps_rank(const std::string& op) {
  static const char* const ops[] = {"Abs", "Affine", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Conv",
                                    "ConvTranspose", "Crop", "Dropout", "GlobalAveragePool", "GlobalLpPool",
                                    "GlobalMaxPool", "LpPool", "MaxPool", "Pad",
                                    "Elu", "Erf", "Exp", "Floor", "Gelu", "ImageScaler", "InstanceNormalization", "LRN",
                                    "LpNormalization", "MeanVarianceNormalization", "ParametricSoftplus", "Scale",
                                    "ScaledTanh",
                                    "HardSigmoid", "HardSwish", "Hardmax", "Identity", "LeakyRelu", "Log",
                                    "LogSoftmax", "Neg", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign",
                                    "Softmax", "Softplus", "Softsign", "Sqrt", "Tanh", "Transpose"};
  for (const char* o : ops)
    if (op == o) return true;
  return false;
}

}  // namespace

namespace {

bool elementwise(const std::string& op) {
  static const char* const ops[] = {"Add", "And", "Div", "Equal", "Greater", "Less", "Max", "Mean", "Min", "Mul",
                                    "Or", "PRelu", "Pow", "Sub", "Sum", "Where", "Xor"};
  for (const char* o : ops)
    if (op == o) return true;
  return false;
}

}  // namespace

std::optional<int> NormSite::rank_of(const std::string& value) const { return rank_at(value, 0); }

std::optional<int> NormSite::rank_at(const std::string& value, int depth) const {
  // Shape inference may leave a rank unknown (a Reshape to a computed shape,
  // an experimental op): then the ranks that follow from the producer alone,
  // back through at most 256 ops: those that keep their input's rank, Flatten
  // (2), Reshape (the length of its shape input), elementwise ops (the
  // largest rank of their inputs; with the legacy `broadcast`, A's).
  std::string at = value;
  for (int step = depth; step < 256; ++step) {
    if (auto it = new_ranks.find(at); it != new_ranks.end()) return it->second;
    if (auto d = dims_of(at)) return static_cast<int>(d->size());
    if (!env || !env->index || !scope) return std::nullopt;
    const GraphIndex::Value* v = env->index->find(*scope, at);
    const onnx::NodeProto* n = v ? v->producer : nullptr;
    if (!n || v->output != 0 || !is_default_domain(n->domain()) || n->input_size() == 0) return std::nullopt;
    if (n->op_type() == "Flatten") return 2;
    if (n->op_type() == "Reshape" && n->input_size() > 1) {
      const auto shape = dims_of(n->input(1));
      if (shape && shape->size() == 1 && (*shape)[0] >= 0) return static_cast<int>((*shape)[0]);
      return std::nullopt;
    }
    if (elementwise(n->op_type()) && !attr_int(*n, "broadcast", 0)) {
      int rank = 0;
      for (const auto& in : n->input()) {
        if (in.empty()) continue;
        const auto r = rank_at(in, step + 1);
        if (!r) return std::nullopt;
        rank = std::max(rank, *r);
      }
      return rank;
    }
    if (!keeps_rank(n->op_type()) && !elementwise(n->op_type())) return std::nullopt;
    if (n->input(0).empty()) return std::nullopt;
    at = n->input(0);
  }
  return std::nullopt;
}

bool NormSite::is_used(const std::string& value) const {
  if (value.empty()) return false;
  if (env->used.count(value)) return true;
  for (const auto& n : after) {
    for (const auto& i : n.input()) {
      if (i == value) return true;
    }
  }
  return false;
}

namespace {

onnx::NodeProto make_node(NormSite& s, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(s.fresh(s.stem() + "_" + op));
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  s.report.added.push_back(fmt::format("{} '{}'", op, n.name()));
  return n;
}

}  // namespace

onnx::NodeProto& NormSite::add_before(const std::string& op, std::vector<std::string> in,
                                      std::vector<std::string> out) {
  before.push_back(make_node(*this, op, std::move(in), std::move(out)));
  return before.back();
}

onnx::NodeProto& NormSite::add_after(const std::string& op, std::vector<std::string> in,
                                     std::vector<std::string> out) {
  after.push_back(make_node(*this, op, std::move(in), std::move(out)));
  return after.back();
}

std::string NormSite::add_int64s(const std::string& stem, const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(fresh(stem));
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  initializers.push_back(t);
  return t.name();
}

std::string input_at(const onnx::NodeProto& n, int i) { return i < n.input_size() ? n.input(i) : std::string(); }
std::string output_at(const onnx::NodeProto& n, int i) { return i < n.output_size() ? n.output(i) : std::string(); }

std::string as_vector(NormSite& s, const std::string& value) {
  if (s.rank_of(value) == 1) return value;
  const auto c = s.env->index->constant(*s.scope, value);
  if (!c) {
    const std::string out = s.fresh(value + "_flat");
    s.add_before("Reshape", {value, s.add_int64s(value + "_flat_shape", {-1})}, {out});
    return out;
  }
  onnx::TensorProto t = *c->tensor;
  int64_t numel = 1;
  for (int64_t d : t.dims()) numel *= d;
  t.set_name(s.fresh(value + "_flat"));
  t.clear_dims();
  t.add_dims(numel);
  s.initializers.push_back(t);
  s.report.added.push_back(fmt::format("initializer '{}' ({} as [{}])", t.name(), value, numel));
  return t.name();
}

int schema_version(const std::string& op, int64_t opset) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), "");
  return schema ? schema->SinceVersion() : 0;
}


bool remove_attr(onnx::NodeProto& n, const std::string& name) {
  auto* attrs = n.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() == name) {
      attrs->erase(attrs->begin() + i);
      return true;
    }
  }
  return false;
}

void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  remove_attr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_cast_to(onnx::NodeProto& cast, int64_t opset, int32_t type) {
  remove_attr(cast, "to");
  auto* a = cast.add_attribute();
  a->set_name("to");
  if (opset >= 6) {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(type);
  } else {
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(type)));
  }
}

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  remove_attr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void trim_outputs(NormSite& s, int count, const std::string& why) {
  auto* outs = s.node.mutable_output();
  for (int i = outs->size() - 1; i >= count; --i) {
    if (s.is_used(outs->Get(i))) {
      throw Error(ErrorKind::unsupported,
                  fmt::format("output {} '{}' is used, but {} leaves the node only {} output{}", i, outs->Get(i), why,
                              count, count == 1 ? "" : "s"))
          .at_node(node_label(s.node), s.node.op_type(), s.version);
    }
    outs->RemoveLast();
  }
}

void pad_outputs(NormSite& s, int count) {
  static const char* const kNames[] = {"y", "mean", "var", "saved_mean", "saved_var"};
  for (int i = 0; i < count; ++i) {
    if (i < s.node.output_size() && !s.node.output(i).empty()) continue;
    const std::string name = s.fresh(fmt::format("{}_{}", s.stem(), kNames[i < 5 ? i : 4]));
    if (i < s.node.output_size()) s.node.set_output(i, name);
    else s.node.add_output(name);
  }
}

void collect_names(const onnx::ModelProto& m, Env& env) {
  for_each_graph(m.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.input()) env.names.insert(v.name());
    for (const auto& v : g.output()) {
      env.names.insert(v.name());
      env.used.insert(v.name());
    }
    for (const auto& t : g.initializer()) env.names.insert(t.name());
    for (const auto& v : g.value_info()) env.names.insert(v.name());
    for (const auto& n : g.node()) {
      env.names.insert(n.name());
      for (const auto& i : n.input()) env.used.insert(i);
      for (const auto& o : n.output()) env.names.insert(o);
    }
  });
}

}  // namespace bnorm::steps
