// verify_norm_folds (norm_affine.h): each norm fold proved on seeded random
// input, as verify.h does for BatchNormalization folds.
#include <fmt/format.h>

#include <map>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "model/attrs.h"
#include "model/graph_index.h"
#include "model/infer.h"
#include "transforms/fold/locate.h"
#include "transforms/fold/verify.h"
#include "transforms/fold/norm_affine.h"

namespace bnorm {

namespace {


// The consumer's input features K, from its weight.
int64_t features(const GraphIndex& index, const Located& consumer) {
  auto w = index.constant(*consumer.scope, consumer.node->input(1));
  if (!w || w->tensor->dims_size() < 2) throw Error(ErrorKind::input, "the consumer's weight is not a constant");
  const auto& d = w->tensor->dims();
  if (consumer.node->op_type() == "Gemm") return attr_int(*consumer.node, "transB", 0) ? d[1] : d[0];
  return consumer.node->op_type() == "Conv" ? d[1] : d[0];
}

// X's declared dims; unknown ones: the feature axis K, the first 2, others 8.
std::vector<int64_t> x_shape(const onnx::TypeProto* t, const std::string& x, bool group, int64_t K) {
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) {
    throw Error(ErrorKind::unsupported, fmt::format("the shape of '{}' is unknown, so the fold cannot be verified", x));
  }
  const auto& dims = t->tensor_type().shape().dim();
  const int feature = group ? 1 : dims.size() - 1;
  std::vector<int64_t> shape;
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i].has_dim_value()) shape.push_back(dims[i].dim_value());
    else shape.push_back(i == feature ? K : i == 0 ? 2 : 8);
  }
  return shape;
}

// The folded nodes, in order: norm, consumer and, when the bias went into
// it, the Add.
std::vector<const onnx::NodeProto*> nodes_of(const GraphIndex& index, const NormFoldReport::Folded& f,
                                             Located& consumer, bool after) {
  const Located norm = producer_of(index, after ? f.norm_output_after : f.norm_output);
  consumer = producer_of(index, f.consumer_output);
  if (!norm.node || !consumer.node) throw Error(ErrorKind::input, "the folded pair is not in the models");
  std::vector<const onnx::NodeProto*> nodes{norm.node, consumer.node};
  if (f.output != f.consumer_output) {
    const Located add = producer_of(index, f.output);
    if (!add.node) throw Error(ErrorKind::input, "the folded Add is not in the models");
    nodes.push_back(add.node);
  }
  return nodes;
}

}  // namespace

std::vector<FoldCheck> verify_norm_folds(const Model& before, const Model& after, const NormFoldReport& report,
                                         uint64_t seed, const std::map<std::string, InputRange>& ranges) {
  const onnx::ModelProto inferred = with_inferred_shapes(before.proto);
  const GraphIndex shapes(inferred);
  const GraphIndex b(before.proto), a(after.proto);
  std::vector<FoldCheck> checks;
  for (const auto& f : report.folded) {
    FoldCheck check{f.graph, f.norm_label, f.consumer_label, !f.consumer.empty(), "", {}, 0, 0, 0, true, ""};
    try {
      Located consumer0, consumer1;
      const auto nodes0 = nodes_of(b, f, consumer0, false);
      const auto nodes1 = nodes_of(a, f, consumer1, true);
      const std::string& x = nodes0[0]->input(0);
      const Located shaped = producer_of(shapes, f.norm_output);
      const onnx::TypeProto* type = shaped.node ? shapes.declared_type(*shaped.scope, x) : nullptr;
      check.shape = x_shape(type, x, f.norm_op == "GroupNormalization", features(b, consumer0));
      const Model m0 = cut(before, b, *consumer0.scope, nodes0, x, *type, check.shape, f.output, true);
      const Model m1 = cut(after, a, *consumer1.scope, nodes1, x, *type, check.shape, f.output, false);
      check.input = x;
      const auto inputs = random_inputs(m1, seed, {}, {}, ranges_for(ranges, x));
      std::map<std::string, Tensor> wide;
      for (const auto& [name, t] : inputs) wide[name] = Tensor::from_f64(DType::float64, t.dims, t.to_f64(), name);
      const std::vector<double> y0 = evaluate(m0, wide).at(f.output).to_f64();
      compare_fold(y0, evaluate(m1, inputs).at(f.output), check);
    } catch (Error& e) {
      e.at_node(f.norm_label, f.norm_op).context("while verifying its fold into '" + f.consumer_label + "'");
      throw;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace bnorm
