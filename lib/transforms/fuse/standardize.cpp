// The standardization chain (x - mean) / sqrt(var + eps) and its
// root-mean-square tail, as exporters write them (match.h, Standardize):
// what each form is, and why a near miss is not one.
#include <fmt/format.h>

#include <algorithm>

#include "model/attrs.h"
#include "transforms/fuse/match.h"

namespace bnorm::fuse {

std::vector<const onnx::NodeProto*> Standardize::nodes() const {
  std::vector<const onnx::NodeProto*> out;
  for (const auto* n : {mean, sub, square, var, add_eps, sqrt, inverse, scale_mul, divide})
    if (n) out.push_back(n);
  return out;
}

std::optional<int64_t> trailing_count(std::vector<int64_t> axes, std::optional<int64_t> rank, std::string& why) {
  const std::string written = ints_text(axes);
  if (axes.empty()) {
    if (!rank) {
      why = "the mean is over every axis and the rank is unknown";
      return std::nullopt;
    }
    for (int64_t a = 0; a < *rank; ++a) axes.push_back(a);
  }
  if (rank) {
    for (auto& a : axes) {
      if (a < -*rank || a >= *rank) {
        why = fmt::format("axes {} are out of range for rank {}", written, *rank);
        return std::nullopt;
      }
      if (a < 0) a += *rank;
    }
  } else if (std::any_of(axes.begin(), axes.end(), [](int64_t a) { return a >= 0; })) {
    why = fmt::format("axes {} count from the front and the rank is unknown: they may not be the trailing axes", written);
    return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  const int64_t k = static_cast<int64_t>(axes.size());
  const int64_t end = rank ? *rank : 0;
  for (int64_t i = 0; i < k; ++i) {
    if (axes[i] != end - k + i) {
      why = rank ? fmt::format("axes {} are not the trailing axes of a rank-{} value", written, *rank)
                 : fmt::format("axes {} are not the trailing axes", written);
      return std::nullopt;
    }
  }
  return k;
}

std::optional<std::vector<int64_t>> mean_axes(const Graph& g, const onnx::NodeProto& rm, std::string& why) {
  if (attr_int(rm, "keepdims", 1) != 1) {
    why = fmt::format("ReduceMean '{}' has keepdims = 0", rm.output(0));
    return std::nullopt;
  }
  std::vector<int64_t> axes;
  if (rm.input_size() > 1 && !rm.input(1).empty()) {
    const auto t = g.constant(rm.input(1));
    if (!t) {
      why = fmt::format("the axes '{}' of ReduceMean '{}' are not a constant", rm.input(1), rm.output(0));
      return std::nullopt;
    }
    const auto ints = t->to_i64();
    if (!ints) {
      why = fmt::format("the axes '{}' of ReduceMean '{}' are not integers", rm.input(1), rm.output(0));
      return std::nullopt;
    }
    axes = *ints;
  } else if (const auto* a = find_attr(rm, "axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  if (axes.empty() && attr_int(rm, "noop_with_empty_axes", 0) != 0) {
    why = fmt::format("ReduceMean '{}' reduces nothing (noop_with_empty_axes = 1)", rm.output(0));
    return std::nullopt;
  }
  return axes;
}

std::optional<std::string> squared(const Graph& g, const onnx::NodeProto& n) {
  if (is_op(n, "Mul") && n.input_size() == 2 && g.same(n.input(0), n.input(1))) return n.input(0);
  if (is_op(n, "Pow") && n.input_size() == 2) {
    const auto e = g.number(n.input(1));
    if (e && *e == 2.0) return n.input(0);
  }
  return std::nullopt;
}

std::optional<double> other_power(const Graph& g, const onnx::NodeProto& n) {
  if (!is_op(n, "Pow") || n.input_size() != 2) return std::nullopt;
  const auto e = g.number(n.input(1));
  if (!e || *e == 2.0) return std::nullopt;
  return e;
}

namespace {

// The Mul reading `inv` (1 / S) whose other operand is `v`, or nullptr.
const onnx::NodeProto* times(const Graph& g, const std::string& inv, const std::string& v) {
  for (const auto* c : g.consumers(inv)) {
    if (is_op(*c, "Mul") && c->input_size() == 2 && g.same(c->input(g.same(c->input(0), inv) ? 1 : 0), v)) return c;
  }
  return nullptr;
}

// After S = Sqrt(E): N = Div(v, S), or I = Reciprocal(S) | Div(1, S) and
// N = Mul(v, I) | Mul(v, Mul(I, scale)). Fills `s`; why not, or "".
std::string match_inverse(const Graph& g, Standardize& s, const std::string& v, bool extra_outputs) {
  const std::string& sd = s.sqrt->output(0);
  const onnx::NodeProto* r = g.sole_consumer(sd, "");
  if (r && is_op(*r, "Div") && r->input_size() == 2 && g.same(r->input(1), sd)) {
    if (g.same(r->input(0), v)) {
      s.divide = r;
      return "";
    }
    const auto one = g.scalar(r->input(0));
    if (!one || *one != 1.0) return fmt::format("'{}' is divided by the Sqrt '{}', not '{}' or 1", r->input(0), sd, v);
    s.inverse = r;
  } else if (r && is_op(*r, "Reciprocal")) {
    s.inverse = r;
  } else {
    return fmt::format("'{}' '{}' is neither the divisor of '{}' (Div) nor inverted (Reciprocal, Div(1, ..)) alone",
                       s.sqrt->op_type(), sd, v);
  }
  const std::string& inv = s.inverse->output(0);
  s.divide = times(g, inv, v);
  for (const auto* c : g.consumers(inv)) {
    if (s.divide || !is_op(*c, "Mul") || c->input_size() != 2) continue;
    if (const auto* n = times(g, c->output(0), v)) {
      s.scale_mul = c;
      s.scale = c->input(g.same(c->input(0), inv) ? 1 : 0);
      s.divide = n;
    }
  }
  if (!s.divide) return fmt::format("1 / sqrt '{}' is not multiplied with '{}'", inv, v);
  if (!extra_outputs && !g.only_read_by(inv, {s.inverse_reader()})) {
    return fmt::format("1 / sqrt '{}' has another reader", inv);
  }
  if (s.scale_mul && !g.only_read_by(s.scale_mul->output(0), {s.divide})) {
    return fmt::format("1 / sqrt times the scale '{}' has another reader", s.scale_mul->output(0));
  }
  return "";
}

// Why there is no Add(M, eps) reading the mean square M alone.
std::string no_epsilon(const Graph& g, const std::string& mv) {
  if (const auto* root = g.sole_consumer(mv, "Sqrt")) {
    if (const auto* add = g.sole_consumer(root->output(0), "Add")) {
      return fmt::format("epsilon is added after the Sqrt '{}' ('{}'): sqrt(v) + eps is not the normalization's "
                         "sqrt(v + eps)", root->output(0), add->output(0));
    }
    return fmt::format("the mean square '{}' goes into the Sqrt with no epsilon added", mv);
  }
  return fmt::format("the mean square '{}' is not read by one Add (of epsilon) alone", mv);
}

}  // namespace

StandardizeMatch match_rms_tail(const Graph& g, const onnx::NodeProto& square, const std::string& v, bool extra_outputs) {
  StandardizeMatch m;
  m.anchored = true;
  Standardize s;
  s.x = v;
  s.square = &square;
  auto fail = [&](std::string why) {
    m.why = std::move(why);
    return m;
  };
  const std::string& sq = square.output(0);
  s.var = g.sole_consumer(sq, "ReduceMean");
  if (!s.var) return fail(fmt::format("the square '{}' is not read by one ReduceMean alone", sq));
  const auto axes = mean_axes(g, *s.var, m.why);
  if (!axes) return m;
  const auto count = trailing_count(*axes, g.rank(v), m.why);
  if (!count) return m;
  s.count = *count;
  const std::string& mv = s.var->output(0);
  s.add_eps = g.sole_consumer(mv, "Add");
  if (!s.add_eps || s.add_eps->input_size() != 2) return fail(no_epsilon(g, mv));
  const std::string& eps = s.add_eps->input(g.same(s.add_eps->input(0), mv) ? 1 : 0);
  if (!g.index->constant(*g.scope, eps)) return fail(fmt::format("epsilon '{}' is not a constant", eps));
  const auto e = g.scalar(eps);
  if (!e) return fail(fmt::format("epsilon '{}' is not one floating-point value", eps));
  s.epsilon = *e;
  const std::string& ve = s.add_eps->output(0);
  s.sqrt = g.sole_consumer(ve, "Sqrt");
  if (!s.sqrt) return fail(fmt::format("'{}' (variance + epsilon) is not read by one Sqrt alone", ve));
  m.why = match_inverse(g, s, v, extra_outputs);
  if (!m.why.empty()) return m;
  m.s = s;
  return m;
}

StandardizeMatch match_standardize(const Graph& g, const onnx::NodeProto& mean, bool extra_outputs) {
  StandardizeMatch m;
  if (!is_op(mean, "ReduceMean") || mean.input_size() < 1 || mean.output_size() != 1) return m;
  const std::string& x = mean.input(0);
  const std::string& mv = mean.output(0);
  const onnx::NodeProto* sub = nullptr;
  for (const auto* c : g.consumers(mv)) {
    if (is_op(*c, "Sub") && c->input_size() == 2 && g.same(c->input(0), x) && g.same(c->input(1), mv)) sub = c;
  }
  if (!sub || g.producer(sub->output(0)) != sub) return m;
  m.anchored = true;
  const auto axes = mean_axes(g, mean, m.why);
  if (!axes) return m;
  const auto count = trailing_count(*axes, g.rank(x), m.why);
  if (!count) return m;
  const std::string& d = sub->output(0);
  const onnx::NodeProto* square = nullptr;
  std::optional<double> power;
  for (const auto* c : g.consumers(d)) {
    if (const auto v = squared(g, *c); v && g.same(*v, d)) square = c;
    if (const auto e = other_power(g, *c); e && g.same(c->input(0), d)) power = e;
  }
  if (!square) {
    m.why = power ? fmt::format("x - mean '{}' is raised to the power {}, not squared", d, *power)
                  : fmt::format("x - mean '{}' is not squared (Pow 2 or Mul with itself)", d);
    return m;
  }
  StandardizeMatch tail = match_rms_tail(g, *square, d, extra_outputs);
  if (!tail.s) return tail;
  Standardize s = *tail.s;
  if (s.count != *count) {
    m.why = fmt::format("the mean is over the last {} axes and the variance over the last {}", *count, s.count);
    return m;
  }
  s.x = x;
  s.mean = &mean;
  s.sub = sub;
  if (!extra_outputs && !g.only_read_by(mv, {sub})) {
    m.why = fmt::format("the mean '{}' has another reader", mv);
    return m;
  }
  if (!g.only_read_by(d, {square, s.divide})) {
    m.why = fmt::format("x - mean '{}' has another reader", d);
    return m;
  }
  m.s = s;
  return m;
}

}  // namespace bnorm::fuse
