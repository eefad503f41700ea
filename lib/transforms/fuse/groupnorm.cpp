// GroupNormalization from its decomposition (upgrade --fuse-norms, opset >= 18).
//
//   Before: R = Reshape(X, [N | 0, G, -1]);
//           N = InstanceNormalization(R, ones [G], zeros [G]) epsilon = eps
//             | the standardization of R over its last axis (match.h: ReduceMean, Sub,
//               Pow | Mul, ReduceMean, Add eps, Sqrt, Div | Reciprocal or Div(1, .) and Mul; the
//               function body; identical copies of a node are one node);
//           [Mul(N, scale [G, 1])]; [Add(., bias [G, 1])]   (per group: -18's function body)
//           Z = Reshape(., Shape(X) | X's dims); [Mul(Z, scale [C, 1, ..])]; [Add(., bias [C, 1, ..])]
//   After:  Y = GroupNormalization(X, scale, bias) epsilon = eps, num_groups = G
//           opset >= 21: scale and bias per channel [C];
//           opset 18..20: per group [G], only when the C / G values of each group are equal
//
// Preconditions: X float, rank >= 2, C (dim 1) known and divisible by G; N
// is X's dim 0 or 0 (Reshape's copy, allowzero 0); the second Reshape gives
// back X's shape (Shape(X), or a constant of X's dims, 0 for dim 0 and one
// -1 allowed); R, N and Z have no reader outside the chain; scale and bias
// (optional: ones and zeros; the chain ends before a Mul or Add that does
// not fit) are constants with one value per group (before the Reshape back)
// or per channel (after it) along axis 1, or one value.
// Formula: group statistics over (C / G) * D1 * .. * Dn values are
// InstanceNormalization's statistics of R; GroupNormalization's definition.
#include <fmt/format.h>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/fuse/match.h"

namespace bnorm::fuse {

namespace {


bool all_equal(const Tensor& t, double v) {
  for (double x : t.to_f64())
    if (x != v) return false;
  return true;
}

// The c values of a constant that, against a value of rank r, holds one value per index of axis 1
// (dims [1, c | 1, 1, ..], left-padded); nullopt when it is not one.
std::optional<std::vector<double>> per_channel(const Graph& g, const std::string& v, int64_t r, int64_t c) {
  const auto t = g.constant(v);
  if (!t || !is_floating(t->dtype) || static_cast<int64_t>(t->dims.size()) > r) return std::nullopt;
  std::vector<int64_t> d(r - t->dims.size(), 1);
  d.insert(d.end(), t->dims.begin(), t->dims.end());
  for (int64_t i = 0; i < r; ++i)
    if (d[i] != 1 && !(i == 1 && d[i] == c)) return std::nullopt;
  std::vector<double> x = t->to_f64();
  if (static_cast<int64_t>(x.size()) == 1) x.assign(static_cast<size_t>(c), x[0]);
  return x;
}

// The Reshape back to X's shape: its shape is Shape(X) or a constant of X's dims.
std::string shape_back(const Graph& g, const onnx::NodeProto& reshape, const std::string& x,
                       const std::vector<int64_t>& xd, const onnx::NodeProto*& shape_node) {
  const std::string& s = reshape.input(1);
  if (const auto* sh = g.producer(s, "Shape")) {
    bool whole = true;  // Shape-15's start 0 and no end: every dim
    for (const auto& a : sh->attribute()) whole = whole && a.name() == "start" && a.i() == 0;
    if (g.same(sh->input(0), x) && whole) {
      shape_node = sh;
      return "";
    }
  }
  const auto t = g.constant(s);
  if (!t) return fmt::format("the shape '{}' of the second Reshape is neither Shape('{}') nor a constant", s, x);
  const std::vector<double> v = t->to_f64();
  bool ok = v.size() == xd.size(), minus = false;
  for (size_t i = 0; ok && i < v.size(); ++i) {
    const auto d = static_cast<int64_t>(v[i]);
    if (d == xd[i] && d >= 0) continue;
    if (d == 0 && i == 0 && attr_int(reshape, "allowzero", 0) == 0) continue;
    if (d == -1 && !minus) {
      minus = true;
      continue;
    }
    ok = false;
  }
  if (!ok) return fmt::format("the second Reshape's shape '{}' is not the shape of '{}'", s, x);
  for (size_t i = 0; i < xd.size(); ++i)
    if (xd[i] < 0 && static_cast<int64_t>(v[i]) != -1 && !(i == 0 && v[i] == 0)) return "X's shape is not known";
  return "";
}

// `v`, through at most a Mul and an Add (each alone reading it), is read by one Reshape alone.
bool reshaped_back(const Graph& g, std::string v) {
  for (const char* op : {"Mul", "Add"}) {
    if (const auto* n = g.sole_consumer(v, op)) v = n->output(0);
  }
  return g.sole_consumer(v, "Reshape") != nullptr;
}

}  // namespace

std::optional<Candidate> match_groupnorm(const Graph& g, const onnx::NodeProto& reshape) {
  if (reshape.input_size() != 2 || reshape.output_size() != 1 || !g.first_copy(reshape)) return std::nullopt;
  const std::string& r = reshape.output(0);
  const onnx::NodeProto* inorm = g.sole_consumer(r, "InstanceNormalization");
  std::optional<StandardizeMatch> core;
  if (!inorm) {
    for (const auto* c : g.consumers(r)) {
      if (c->op_type() != "ReduceMean" || !g.same(c->input(0), r)) continue;
      StandardizeMatch m = match_standardize(g, *c, false);
      if (m.anchored) core = std::move(m);
    }
    // A standardization of some other Reshape (a LayerNormalization of [B, T, -1], ...) is
    // the LayerNormalization matcher's: only one whose value goes back through a Reshape is ours.
    if (!core || !core->s || !reshaped_back(g, core->s->out())) return std::nullopt;
  }
  const auto shape = g.constant(reshape.input(1));
  if (!shape || shape->numel() != 3) return std::nullopt;
  Candidate c{"GroupNormalization", 18, &reshape, std::nullopt, ""};
  auto no = [&](std::string why) {
    c.why = std::move(why);
    return c;
  };
  const std::string& x = reshape.input(0);
  const auto xd = g.dims(x);
  if (g.elem_type(x) != static_cast<int32_t>(DType::float32)) {
    return no(fmt::format("'{}' is not float (or its type is unknown): GroupNormalization computes in float", x));
  }
  if (!xd || xd->size() < 2 || (*xd)[1] <= 0) return no(fmt::format("the channel count (dim 1) of '{}' is unknown", x));
  const int64_t channels = (*xd)[1], rank = static_cast<int64_t>(xd->size());
  const auto ints = shape->to_i64();
  if (!ints) return no(fmt::format("the first Reshape's shape '{}' holds values that are no int64", reshape.input(1)));
  const std::vector<int64_t>& s1 = *ints;
  const int64_t groups = s1[1];
  const bool n_ok = (s1[0] == 0 && attr_int(reshape, "allowzero", 0) == 0) || (s1[0] >= 0 && s1[0] == (*xd)[0]);
  if (!n_ok || groups <= 0 || s1[2] != -1) {
    return no(fmt::format("the first Reshape's shape [{}, {}, {}] is not [N or 0, groups, -1]", s1[0], s1[1], s1[2]));
  }
  if (channels % groups != 0) return no(fmt::format("{} channels do not split into {} groups", channels, groups));

  Fusion fu;
  fu.nodes.push_back(&reshape);
  double epsilon = 1e-5;
  std::string normalized;
  if (inorm) {
    if (inorm->input_size() != 3 || !g.same(inorm->input(0), r)) return no("InstanceNormalization does not read the Reshape as X");
    const auto scale = g.constant(inorm->input(1)), bias = g.constant(inorm->input(2));
    if (!scale || !bias || scale->numel() != groups || bias->numel() != groups || !all_equal(*scale, 1.0) ||
        !all_equal(*bias, 0.0)) {
      return no("InstanceNormalization's scale and bias are not constant ones and zeros");
    }
    for (const auto& a : inorm->attribute())
      if (a.name() == "epsilon") epsilon = a.f();
    fu.nodes.push_back(inorm);
    normalized = inorm->output(0);
  } else {
    const Standardize& s = *core->s;
    if (s.count != 1) return no(fmt::format("the statistics are over {} axes of the reshaped value, not its last", s.count));
    if (!s.scale.empty()) {
      return no(fmt::format("the scale '{}' multiplies 1 / sqrt inside the group standardization", s.scale));
    }
    if (!g.only_read_by(r, {s.mean, s.sub})) return no(fmt::format("the reshaped value '{}' has another reader", r));
    for (const auto* n : s.nodes()) fu.nodes.push_back(n);
    epsilon = s.epsilon;
    normalized = s.out();
  }
  // scale and bias: per group on the grouped value (GroupNormalization-18's
  // function body), or per channel after the Reshape back (-21's).
  std::vector<double> scale(static_cast<size_t>(channels), 1.0), bias(static_cast<size_t>(channels), 0.0);
  std::vector<double>* params[] = {&scale, &bias};
  const char* ops[] = {"Mul", "Add"};
  const int64_t per = channels / groups;
  auto affine = [&](std::string& y, int64_t of_rank, int64_t count) {
    bool found = false;
    for (int k = 0; k < 2; ++k) {
      const onnx::NodeProto* n = g.sole_consumer(y, ops[k]);
      if (!n || n->input_size() != 2 || n->input(0) == n->input(1)) continue;
      const auto v = per_channel(g, n->input(n->input(0) == y ? 1 : 0), of_rank, count);
      if (!v) continue;
      params[k]->clear();
      for (double e : *v) params[k]->insert(params[k]->end(), static_cast<size_t>(channels / count), e);
      fu.nodes.push_back(n);
      y = n->output(0);
      found = true;
    }
    return found;
  };
  std::string y = normalized;
  const bool grouped_affine = affine(y, 3, groups);
  const onnx::NodeProto* back = g.sole_consumer(y, "Reshape");
  if (!back || back->input_size() != 2 || !g.same(back->input(0), y)) {
    return no(fmt::format("the normalized value '{}' is not read by one Reshape alone", y));
  }
  const onnx::NodeProto* shape_node = nullptr;
  if (auto why = shape_back(g, *back, x, *xd, shape_node); !why.empty()) return no(why);
  fu.nodes.push_back(back);
  if (shape_node && g.only_read_by(shape_node->output(0), {back})) fu.nodes.push_back(shape_node);
  y = back->output(0);
  if (!grouped_affine) affine(y, rank, channels);

  const bool per_group = g.opset >= 18 && g.opset < 21;
  const char* names[] = {"scale", "bias"};
  onnx::NodeProto& n = fu.node;
  n.set_op_type("GroupNormalization");
  n.add_input(x);
  for (int k = 0; k < 2; ++k) {
    std::vector<double> values = *params[k];
    if (per_group) {
      std::vector<double> one;
      for (int64_t gi = 0; gi < groups; ++gi) {
        for (int64_t j = 1; j < per; ++j) {
          if (values[gi * per + j] != values[gi * per]) {
            return no(fmt::format("the {} differs within group {}: GroupNormalization-18 (opsets 18 to 20) has one "
                                  "value per group, per-channel values need opset 21", names[k], gi));
          }
        }
        one.push_back(values[gi * per]);
      }
      values = one;
    }
    Tensor t = Tensor::from_f64(DType::float32, {static_cast<int64_t>(values.size())}, values);
    t.name = g.fresh(fmt::format("{}_gn_{}", x, names[k]));
    n.add_input(t.name);
    fu.initializers.push_back(to_proto(t));
  }
  n.add_output(y);
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(static_cast<float>(epsilon));
  auto* ng = n.add_attribute();
  ng->set_name("num_groups");
  ng->set_type(onnx::AttributeProto::INT);
  ng->set_i(groups);
  fu.detail = fmt::format("num_groups {}, epsilon {}, scale and bias per {}", groups, float_text(epsilon),
                          per_group ? "group" : "channel");
  c.fusion = std::move(fu);
  return c;
}

}  // namespace bnorm::fuse
