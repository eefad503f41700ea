// LayerNormalization from its decomposition (upgrade --fuse-norms, opset >= 17).
//
//   Before: Mean = ReduceMean(x, axes, keepdims 1); D = Sub(x, Mean); Sq = Pow(D, 2) | Mul(D, D);
//           Var = ReduceMean(Sq, axes); E = Add(Var, eps); S = Sqrt(E);
//           N = Div(D, S) | Mul(D, InvStdDev) | Mul(D, Mul(InvStdDev, Scale))
//             with InvStdDev = Reciprocal(S) | Div(1, S); [Mul(N, Scale)]; [Add(., B)]
//           (commutative operands either way round; identical copies of a node,
//           e.g. tf2onnx's two Sub(x, Mean), are one node: match.h, Copies)
//           with x = X (float), or x = Cast(X, float) and N cast back to X's type (the
//           function body of LayerNormalization-17, float16 exports)
//   After:  Y, [Mean], [InvStdDev] = LayerNormalization(X, Scale | ones, [B]) axis = -k, epsilon = eps
//
// Preconditions: the axes of both ReduceMeans are the same trailing k axes
// of x (negative ones, or x's rank known); eps is one constant value; D,
// Sq, Var, E and S have no reader outside the chain, and neither has
// Mean or InvStdDev unless they become the op's optional outputs (same
// values, type float); the statistics are computed in float (X float, or
// the Cast frame); Scale and B (optional: the chain ends before a Mul or
// Add that does not fit) have known shapes that broadcast over the last k
// axes of X only. Without a Scale, the ones are of X's last k dims, which
// must be known.
// Formula: LayerNormalization-17's definition, stash_type 1: the same chain
// (D * (InvStdDev * Scale) is (D * InvStdDev) * Scale reassociated: equal
// up to float rounding, as Div(D, S) against Mul(D, 1 / S) already is).
#include <fmt/format.h>

#include "transforms/fuse/match.h"

namespace bnorm::fuse {

std::optional<Candidate> match_layernorm(const Graph& g, const onnx::NodeProto& reduce_mean) {
  const StandardizeMatch m = match_standardize(g, reduce_mean, true);
  if (!m.anchored || !g.first_copy(reduce_mean)) return std::nullopt;
  Candidate c{"LayerNormalization", 17, &reduce_mean, std::nullopt, m.why};
  if (!m.s) return c;
  const Standardize& s = *m.s;
  CastFrame f;
  c.why = cast_frame(g, s, {s.mean, s.sub}, f);
  if (!c.why.empty()) return c;

  Fusion fu;
  if (f.head && f.remove_head) fu.nodes.push_back(f.head);
  for (const auto* n : s.nodes()) fu.nodes.push_back(n);
  std::string y = s.out();
  if (f.tail) {
    fu.nodes.push_back(f.tail);
    y = f.tail->output(0);
  }
  std::string scale, bias;
  if (const auto* mul = scale_of(g, s, y, f.x_in, scale, c.why)) {
    fu.nodes.push_back(mul);
    y = mul->output(0);
  }
  if (!c.why.empty()) return c;
  if (const auto* add = affine_after(g, y, "Add", f.x_in, s.count, bias)) {
    fu.nodes.push_back(add);
    y = add->output(0);
  }
  if (scale.empty()) {
    auto ones = ones_of_normalized_shape(g, f.x_in, s.count, f.x_in + "_ln_scale");
    if (!ones) {
      c.why = fmt::format("there is no Scale and the last {} dims of '{}' are unknown: no Scale of ones can be made",
                          s.count, f.x_in);
      return c;
    }
    scale = ones->name();
    fu.initializers.push_back(std::move(*ones));
  }

  onnx::NodeProto& n = fu.node;
  n.set_op_type("LayerNormalization");
  n.add_input(f.x_in);
  n.add_input(scale);
  if (!bias.empty()) n.add_input(bias);
  n.add_output(y);
  const std::string& mean = s.mean->output(0);
  const bool mean_out = !g.only_read_by(mean, {s.sub});
  const bool inv_out = s.inverse && !g.only_read_by(s.inverse->output(0), {s.inverse_reader()});
  if (mean_out || inv_out) n.add_output(mean_out ? mean : "");
  if (inv_out) n.add_output(s.inverse->output(0));
  auto* axis = n.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-s.count);
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(static_cast<float>(s.epsilon));
  fu.detail = fmt::format("axis {}, epsilon {}{}{}", -s.count, float_text(s.epsilon), fu.initializers.empty() ? "" : ", Scale of ones",
                          mean_out || inv_out ? ", Mean/InvStdDev as outputs" : "");
  c.fusion = std::move(fu);
  c.why.clear();
  return c;
}

}  // namespace bnorm::fuse
