// RMSNormalization from its decomposition (upgrade --fuse-norms, opset >= 23).
//
//   Before: Sq = Pow(x, 2) | Mul(x, x); M = ReduceMean(Sq, axes, keepdims 1); E = Add(M, eps);
//           S = Sqrt(E); N = Div(x, S) | Mul(x, I) | Mul(x, Mul(I, scale)) with I = Reciprocal(S) |
//           Div(1, S); [Mul(N, scale)]   (commutative operands either way round; identical
//           copies of a node are one node: match.h, Copies)
//           with x = X (float), or x = Cast(X, float) and N cast back to X's type (Llama-style
//           exports, the function body of RMSNormalization-23)
//   After:  Y = RMSNormalization(X, scale | ones) axis = -k, epsilon = eps
//
// Anchored at a ReduceMean of a square (or of Pow(x, e), reported: e is
// not 2) read by an Add read by a Sqrt, or by a Sqrt (reported: epsilon
// after the root, or none, is another formula). Not
// when x is itself x' - ReduceMean(x') (a LayerNormalization's tail:
// layernorm.cpp says why that one is left). Preconditions: the axes are
// the trailing k axes of x (negative ones, or x's rank known); eps is one
// constant value; Sq, M, E, S (and 1 / S) have no reader outside the chain;
// the mean is computed in float (X float, or the Cast frame); the scale
// (optional: the chain ends before a Mul that does not fit) has a known
// shape broadcasting over the last k axes of X only. Without a scale, the
// ones are of X's last k dims, which must be known.
// Formula: RMSNormalization-23's definition, stash_type 1: the same chain
// (x * (I * scale) is (x * I) * scale reassociated: equal up to float rounding).
#include <fmt/format.h>

#include "transforms/fuse/match.h"

namespace bnorm::fuse {

namespace {

// rm's output goes through an Add into a Sqrt, or into a Sqrt (epsilon after it, or none: a
// near miss to report): the shape of a root mean square.
bool feeds_root(const Graph& g, const onnx::NodeProto& rm) {
  for (const auto* n : g.consumers(rm.output(0))) {
    if (n->op_type() == "Sqrt") return true;
    if (n->op_type() != "Add") continue;
    for (const auto* s : g.consumers(n->output(0)))
      if (s->op_type() == "Sqrt") return true;
  }
  return false;
}

// v = Sub(a, ReduceMean(a)): the square is a LayerNormalization's variance.
bool is_centered(const Graph& g, const std::string& v) {
  const auto* sub = g.producer(v, "Sub");
  if (!sub || sub->input_size() != 2) return false;
  const auto* mean = g.producer(sub->input(1), "ReduceMean");
  return mean && g.same(mean->input(0), sub->input(0));
}

}  // namespace

std::optional<Candidate> match_rmsnorm(const Graph& g, const onnx::NodeProto& reduce_mean) {
  if (reduce_mean.output_size() != 1 || reduce_mean.input_size() < 1 || !g.first_copy(reduce_mean)) return std::nullopt;
  const onnx::NodeProto* square = g.producer(reduce_mean.input(0));
  if (!square || !feeds_root(g, reduce_mean)) return std::nullopt;
  const auto v = squared(g, *square);
  if (!v) {
    const auto e = other_power(g, *square);
    if (!e || is_centered(g, square->input(0))) return std::nullopt;
    return Candidate{"RMSNormalization", 23, &reduce_mean, std::nullopt,
                     fmt::format("'{}' is raised to the power {}, not squared", square->input(0), *e)};
  }
  if (is_centered(g, *v)) return std::nullopt;
  const StandardizeMatch m = match_rms_tail(g, *square, *v, false);
  Candidate c{"RMSNormalization", 23, &reduce_mean, std::nullopt, m.why};
  if (!m.s) return c;
  const Standardize& s = *m.s;
  if (s.var != &reduce_mean) return std::nullopt;
  CastFrame f;
  c.why = cast_frame(g, s, {s.square, s.divide}, f);
  if (!c.why.empty()) return c;

  Fusion fu;
  if (f.head && f.remove_head) fu.nodes.push_back(f.head);
  for (const auto* n : s.nodes()) fu.nodes.push_back(n);
  std::string y = s.out();
  if (f.tail) {
    fu.nodes.push_back(f.tail);
    y = f.tail->output(0);
  }
  std::string scale;
  if (const auto* mul = scale_of(g, s, y, f.x_in, scale, c.why)) {
    fu.nodes.push_back(mul);
    y = mul->output(0);
  }
  if (!c.why.empty()) return c;
  if (scale.empty()) {
    auto ones = ones_of_normalized_shape(g, f.x_in, s.count, f.x_in + "_rms_scale");
    if (!ones) {
      c.why = fmt::format("there is no scale and the last {} dims of '{}' are unknown: no scale of ones can be made",
                          s.count, f.x_in);
      return c;
    }
    scale = ones->name();
    fu.initializers.push_back(std::move(*ones));
  }

  onnx::NodeProto& n = fu.node;
  n.set_op_type("RMSNormalization");
  n.add_input(f.x_in);
  n.add_input(scale);
  n.add_output(y);
  auto* axis = n.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-s.count);
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(static_cast<float>(s.epsilon));
  fu.detail = fmt::format("axis {}, epsilon {}{}", -s.count, float_text(s.epsilon),
                          fu.initializers.empty() ? "" : ", scale of ones");
  c.fusion = std::move(fu);
  c.why.clear();
  return c;
}

}  // namespace bnorm::fuse
