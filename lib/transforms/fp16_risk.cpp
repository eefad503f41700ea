#include "transforms/fp16_risk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "eval/run/evaluator.h"
#include "kernels/half.h"
#include "model/attrs.h"
#include "model/graph_index.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/tensor_proto.h"

namespace bnorm {

namespace {

constexpr double kF16Max = 65504.0;
const double kF16MinNormal = std::ldexp(1.0, -14);
const double kF16MinSubnormal = std::ldexp(1.0, -24);

double to_f16(double v) { return kernels::f16_to_f32(kernels::f64_to_f16(v)); }

struct Param {
  int input;
  const char* name;
};

std::vector<Param> params_of(const std::string& op) {
  if (op == "BatchNormalization") return {{1, "scale"}, {2, "B"}, {3, "input_mean"}, {4, "input_var"}};
  if (op == "InstanceNormalization") return {{1, "scale"}, {2, "B"}};
  if (op == "LayerNormalization") return {{1, "Scale"}, {2, "B"}};
  if (op == "GroupNormalization") return {{1, "scale"}, {2, "bias"}};
  if (op == "RMSNormalization") return {{1, "scale"}};
  return {};
}

bool statistics_norm(const std::string& op) {
  return op == "LayerNormalization" || op == "GroupNormalization" || op == "RMSNormalization";
}

float epsilon_of(const onnx::NodeProto& n, int64_t opset) {
  if (is_norm_node(n)) return read_norm_node(n, opset).epsilon;
  for (const auto& a : n.attribute())
    if (a.name() == "epsilon") return a.f();
  return 1e-5f;
}

struct Site {
  std::string graph, label, op;
  int index;
  Fp16Risk risk(std::string check, std::string input, std::string what, std::string advice) const {
    return {graph, label, op, index, std::move(check), std::move(input), std::move(what), std::move(advice)};
  }
};

void check_overflow(const Site& s, const char* name, const std::vector<double>& v, std::vector<Fp16Risk>& out) {
  size_t above = 0, inf = 0;
  double worst = 0;
  for (double x : v) {
    if (!(std::fabs(x) > kF16Max) || std::isinf(x)) continue;
    ++above;
    worst = std::max(worst, std::fabs(x));
    if (std::isinf(to_f16(x))) ++inf;
  }
  if (above == 0) return;
  const bool bn_stats = s.op == "BatchNormalization" && (std::string(name) == "input_var" || std::string(name) == "input_mean");
  out.push_back(s.risk(
      "overflow", name,
      fmt::format("{} of {} {} values are above float16's largest 65504 (up to {:.4g}); {} of them become inf", above,
                  v.size(), name, worst, inf),
      bn_stats ? "fold the BatchNormalization into the layer before it (bnorm fold) so no statistics are stored, "
                 "or keep this node in float32"
               : "keep this node in float32 when converting (exclude it from the float16 conversion)"));
}

void check_subnormal_scale(const Site& s, const char* name, const std::vector<double>& v, std::vector<Fp16Risk>& out) {
  size_t sub = 0, zero = 0;
  for (double x : v) {
    if (!(std::fabs(x) > 0 && std::fabs(x) < kF16MinNormal)) continue;
    ++sub;
    if (to_f16(x) == 0) ++zero;
  }
  if (sub == 0) return;
  out.push_back(s.risk(
      "subnormal_scale", name,
      fmt::format("{} of {} {} values are float16 subnormals (below 6.1e-05): they lose precision, {} round to 0, "
                  "and hardware that flushes subnormals makes them all 0",
                  sub, v.size(), name, zero),
      "keep this node in float32, or fold the scale into the next layer (bnorm fold) so the tiny factors "
      "multiply weights instead of activations"));
}

void check_epsilon(const Site& s, double eps, std::vector<Fp16Risk>& out) {
  if (!(eps > 0) || eps >= kF16MinSubnormal) return;
  const double h = to_f16(eps);
  const std::string advice =
      "raise epsilon to at least 6.0e-08 (float16's smallest subnormal; 1e-5 is usual), or keep this node in float32";
  if (h == 0) {
    out.push_back(s.risk("epsilon_zero", "epsilon",
                         fmt::format("epsilon {:.3g} rounds to 0 in float16: an input of zero variance divides by 0",
                                     eps),
                         advice));
  } else {
    out.push_back(s.risk("epsilon_tiny", "epsilon",
                         fmt::format("epsilon {:.3g} is below float16's smallest subnormal and becomes {:.3g}", eps, h),
                         advice));
  }
}

}  // namespace

namespace {


// Elements per normalized group (contiguous in X), or 0 when X's shape does
// not fit the node (the evaluator then refused it already).
int64_t group_length(const onnx::NodeProto& n, const std::vector<int64_t>& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (n.op_type() == "GroupNormalization") {
    const int64_t groups = attr_int(n, "num_groups", 0);
    if (rank < 2 || groups < 1 || dims[1] % groups != 0) return 0;
    int64_t len = dims[1] / groups;
    for (int64_t i = 2; i < rank; ++i) len *= dims[i];
    return len;
  }
  int64_t axis = attr_int(n, "axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return 0;
  int64_t len = 1;
  for (int64_t i = axis; i < rank; ++i) len *= dims[i];
  return len;
}

void check_sum_of_squares(const Site& s, const onnx::NodeProto& n, const Tensor& x, std::vector<Fp16Risk>& out) {
  const int64_t len = group_length(n, x.dims);
  if (len <= 0) return;
  const std::vector<double> v = x.to_f64();
  double worst = 0, max_abs = 0;
  for (size_t start = 0; start + len <= v.size(); start += static_cast<size_t>(len)) {
    double sum = 0;
    for (int64_t i = 0; i < len; ++i) {
      sum += v[start + i] * v[start + i];
      max_abs = std::max(max_abs, std::fabs(v[start + i]));
    }
    worst = std::max(worst, sum);
  }
  if (!(worst > kF16Max)) return;
  out.push_back(s.risk(
      "sum_of_squares", "X",
      fmt::format("the sum of x^2 over one normalized group of {} elements reaches {:.6g} (max |x| {:.6g}), beyond "
                  "float16's 65504: float16 statistics overflow to inf and the output becomes 0 or NaN",
                  len, worst, max_abs),
      n.op_type() == "GroupNormalization"
          ? "keep this node in float32 (GroupNormalization-21's stash_type = 1 asks for float32 statistics, if "
            "the runtime honours it), or scale its input down"
          : "keep stash_type = 1 (float32 statistics, the default) and check that the runtime honours it, or keep "
            "this node in float32"));
}

}  // namespace

std::vector<Fp16Risk> fp16_risks(const Model& model, const std::map<std::string, Tensor>* inputs) {
  const int64_t opset = default_opset(model.proto);
  const GraphIndex index(model.proto);
  std::vector<Fp16Risk> out;
  std::vector<std::pair<Site, const onnx::NodeProto*>> measured;
  for (const auto& scope : index.scopes()) {
    for (int k = 0; k < scope->graph->node_size(); ++k) {
      const onnx::NodeProto& n = scope->graph->node(k);
      const auto params = params_of(n.op_type());
      if (!is_default_domain(n.domain()) || params.empty()) continue;
      const Site site{scope->path, node_label(n, k), n.op_type(), k};
      for (const auto& p : params) {
        if (p.input >= n.input_size() || n.input(p.input).empty()) continue;
        const auto c = index.constant(*scope, n.input(p.input));
        if (!c || !is_floating(static_cast<DType>(c->tensor->data_type()))) continue;
        const std::vector<double> v = decode_as_saved(model, *c->tensor).to_f64();
        check_overflow(site, p.name, v, out);
        if (p.input == 1) check_subnormal_scale(site, p.name, v, out);
      }
      check_epsilon(site, epsilon_of(n, opset), out);
      if (inputs && statistics_norm(n.op_type()) && scope->parent == nullptr && n.input_size() > 0) {
        measured.emplace_back(site, &n);
      }
    }
  }
  if (measured.empty()) return out;
  EvalOptions options;
  for (const auto& [site, n] : measured) options.outputs.push_back(n->input(0));
  std::sort(options.outputs.begin(), options.outputs.end());
  options.outputs.erase(std::unique(options.outputs.begin(), options.outputs.end()), options.outputs.end());
  const auto values = evaluate(model, *inputs, options);
  for (const auto& [site, n] : measured) {
    auto it = values.find(n->input(0));
    if (it != values.end() && is_floating(it->second.dtype)) check_sum_of_squares(site, *n, it->second, out);
  }
  return out;
}

}  // namespace bnorm
