#include "transforms/fold/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "transforms/fold/locate.h"
#include "model/tensor_proto.h"

namespace bnorm {

namespace {

// The shape X is given: declared dims, symbolic ones replaced.
std::vector<int64_t> x_shape(const onnx::TypeProto* t, const onnx::NodeProto& producer, const GraphIndex& index,
                             const GraphIndex::Scope& scope) {
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) {
    throw Error(ErrorKind::unsupported, fmt::format("the shape of '{}' is unknown, so the fold cannot be verified",
                                                    producer.input(0)));
  }
  int64_t extent = 1;  // a spatial size every kernel fits in
  if (auto w = index.constant(scope, producer.input(1))) {
    for (int i = 2; i < w->tensor->dims_size(); ++i) extent = std::max<int64_t>(extent, w->tensor->dims(i));
  }
  std::vector<int64_t> shape;
  const auto& dims = t->tensor_type().shape().dim();
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i].has_dim_value()) shape.push_back(dims[i].dim_value());
    else shape.push_back(i == 0 ? 2 : std::max<int64_t>(8, extent + 4));
  }
  return shape;
}

}  // namespace

Model cut(const Model& src, const GraphIndex& index, const GraphIndex::Scope& scope,
          const std::vector<const onnx::NodeProto*>& nodes, const std::string& x, const onnx::TypeProto& x_type,
          const std::vector<int64_t>& shape, const std::string& y, bool widen) {
  Model m;
  m.path = src.path;
  m.proto.set_ir_version(std::max<int64_t>(src.proto.ir_version(), 3));
  *m.proto.mutable_opset_import() = src.proto.opset_import();
  if (m.proto.opset_import_size() == 0) m.proto.add_opset_import()->set_version(1);
  auto* g = m.proto.mutable_graph();
  g->set_name("fold_check");
  add_tensor_input(*g, x, widen ? static_cast<int32_t>(DType::float64) : x_type.tensor_type().elem_type(), shape);
  std::vector<std::string> made;
  for (const auto* n : nodes) {
    *g->add_node() = *n;
    for (const auto& i : n->input()) {
      if (i.empty() || i == x || std::count(made.begin(), made.end(), i)) continue;
      auto c = index.constant(scope, i);
      if (!c) throw Error(ErrorKind::input, fmt::format("input '{}' of '{}' is not a constant", i, n->name()));
      Tensor t = decode_as_saved(src, *c->tensor);
      if (widen && is_floating(t.dtype)) t = Tensor::from_f64(DType::float64, t.dims, t.to_f64());
      auto* init = g->add_initializer();
      encode_tensor(t, init);
      init->set_name(i);
    }
    for (const auto& o : n->output()) made.push_back(o);
  }
  g->add_output()->set_name(y);
  return m;
}

void compare_fold(const std::vector<double>& y0, const Tensor& y1, FoldCheck& check) {
  const std::vector<double> v1 = y1.to_f64();
  const bool half = y1.dtype == DType::float16 || y1.dtype == DType::bfloat16;
  check.type = dtype_name(y1.dtype);
  check.rtol = half ? 1e-2 : 1e-4;
  double scale = 0;
  for (size_t i = 0; i < y0.size(); ++i) {
    if (std::isnan(y0[i]) != std::isnan(v1[i])) check.max_abs = INFINITY;
    if (!std::isfinite(y0[i]) || !std::isfinite(v1[i])) continue;
    scale = std::max(scale, std::fabs(y0[i]));
    check.max_abs = std::max(check.max_abs, std::fabs(v1[i] - y0[i]));
  }
  check.max_rel = scale > 0 ? check.max_abs / scale : check.max_abs;
  check.pass = check.max_abs <= check.rtol * scale;
}

std::map<std::string, InputRange> ranges_for(const std::map<std::string, InputRange>& ranges, const std::string& x) {
  const auto it = ranges.find(x);
  if (it == ranges.end()) return {};
  return {*it};
}

std::vector<FoldCheck> verify_folds(const Model& before, const Model& after, const FoldReport& report, uint64_t seed,
                                    const std::map<std::string, InputRange>& ranges) {
  const onnx::ModelProto inferred = with_inferred_shapes(before.proto);
  const GraphIndex shapes(inferred);
  const GraphIndex b(before.proto), a(after.proto);
  std::vector<FoldCheck> checks;
  for (const auto& f : report.folded) {
    FoldCheck check{f.graph, f.bn_label, f.producer_label, !f.producer.empty(), "", {}, 0, 0, 0, true, ""};
    try {
      const Located bn = producer_of(b, f.output);
      const Located folded = producer_of(a, f.output);
      if (!bn.node || !folded.node) throw Error(ErrorKind::input, "the folded pair is not in the models");
      const Located producer = producer_of(b, bn.node->input(0));
      const Located shaped = producer_of(shapes, bn.node->input(0));
      const std::string& x = producer.node->input(0);
      const onnx::TypeProto* type = shaped.node ? shapes.declared_type(*shaped.scope, x) : nullptr;
      check.shape = x_shape(type, *producer.node, b, *producer.scope);
      const Model m0 = cut(before, b, *producer.scope, {producer.node, bn.node}, x, *type, check.shape, f.output, true);
      const Model m1 = cut(after, a, *folded.scope, {folded.node}, x, *type, check.shape, f.output, false);
      check.input = x;
      const auto inputs = random_inputs(m1, seed, {}, {}, ranges_for(ranges, x));
      std::map<std::string, Tensor> wide;
      for (const auto& [name, t] : inputs) wide[name] = Tensor::from_f64(DType::float64, t.dims, t.to_f64(), name);
      const std::vector<double> y0 = evaluate(m0, wide).at(f.output).to_f64();
      compare_fold(y0, evaluate(m1, inputs).at(f.output), check);
    } catch (Error& e) {
      e.at_node(f.bn_label, "BatchNormalization").context("while verifying its fold into '" + f.producer_label + "'");
      throw;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace bnorm
