// Rules of the ops with subgraphs: If (the branches' outputs: a dim both
// agree on, else unknown; the rank when both agree), Loop (loop-carried
// values from the body, each scan output with a leading dim), Scan (state
// values from the body, scan outputs with the scanned dim added).
#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

InferredValue join(const InferredValue& a, const InferredValue& b) {
  InferredValue r;
  r.elem = a.elem == b.elem ? a.elem : a.elem ? a.elem : b.elem;
  if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
    r.shape.emplace();
    for (size_t i = 0; i < a.shape->size(); ++i) r.shape->push_back((*a.shape)[i] == (*b.shape)[i] ? (*a.shape)[i] : InferredDim{});
  }
  return r;
}

void if_rule(NodeCtx& c) {
  const auto t = c.subgraph_outputs("then_branch"), e = c.subgraph_outputs("else_branch");
  if (const auto cond = c.ints(0); cond && cond->size() == 1) {
    // A condition known from the shapes (AffineGrid's rank test): that branch.
    const auto& taken = (*cond)[0] ? t : e;
    for (size_t o = 0; o < c.out.size() && o < taken.size(); ++o) c.out[o] = taken[o];
    return;
  }
  for (size_t o = 0; o < c.out.size() && o < t.size() && o < e.size(); ++o) {
    c.out[o] = join(t[o], e[o]);
    c.out[o].values.reset();
  }
}

// Body outputs: [cond, carried..., scan outputs...]; node outputs: [carried..., scan outputs...].
void loop(NodeCtx& c) {
  const auto body = c.subgraph_outputs("body");
  const size_t carried = c.in.size() >= 2 ? c.in.size() - 2 : 0;
  for (size_t o = 0; o < c.out.size() && o + 1 < body.size(); ++o) {
    InferredValue v = body[o + 1];
    v.values.reset();
    v.reals.reset();
    if (o < carried) {
      // The body may change a carried value's dims from one iteration to the next.
      if (const InferredValue* init = c.input(o + 2)) v = join(*init, v);
    } else if (v.shape) {
      // M iterations when the condition stays true: absent or true at the
      // start, and the body's condition output then true (the body's
      // condition input carries the node's, engine.cpp).
      InferredDim trip;
      const auto cond = c.ints(1);
      const bool starts = !c.has_input(1) || (cond && cond->size() == 1 && (*cond)[0] != 0);
      const bool stays = !body.empty() && body[0].values && body[0].values->size() == 1 &&
                         (*body[0].values)[0].known() && (*body[0].values)[0].value != 0;
      if (auto m = c.ints(0); m && m->size() == 1 && starts && stays) trip = InferredDim::of((*m)[0]);
      v.shape->insert(v.shape->begin(), trip);
    }
    c.out[o] = v;
  }
}

// Scan-8: inputs [sequence_lens?, states..., scan inputs...], every value
// with a batch axis 0 that the body does not see, scanned along axis 1.
void scan_8(NodeCtx& c, const std::vector<InferredValue>& body) {
  const int64_t scan_inputs = attr_int(c.node, "num_scan_inputs", 0);
  const size_t states = c.in.size() >= 1 + static_cast<size_t>(scan_inputs) ? c.in.size() - 1 - static_cast<size_t>(scan_inputs) : 0;
  InferredDim batch, length;
  if (const auto* s = c.shape(1 + states); s && s->size() >= 2) batch = (*s)[0], length = (*s)[1];
  for (size_t o = 0; o < c.out.size() && o < body.size(); ++o) {
    InferredValue v = body[o];
    v.values.reset();
    v.reals.reset();
    if (v.shape) {
      if (o >= states) v.shape->insert(v.shape->begin(), length);
      v.shape->insert(v.shape->begin(), batch);
    }
    c.out[o] = v;
  }
}

// Scan-9+: inputs [states..., scan inputs...], body outputs [states..., scan outputs...].
void scan(NodeCtx& c) {
  const auto body = c.subgraph_outputs("body");
  if (c.version < 9) {
    scan_8(c, body);
    return;
  }
  const int64_t scan_inputs = attr_int(c.node, "num_scan_inputs", 0);
  const size_t states = c.in.size() >= static_cast<size_t>(scan_inputs) ? c.in.size() - static_cast<size_t>(scan_inputs) : 0;
  InferredDim length;
  if (states < c.in.size()) {
    const auto axes = attr_ints(c.node, "scan_input_axes");
    const auto* s = c.shape(states);
    const int64_t axis = s ? norm_axis(axes && !axes->empty() ? (*axes)[0] : 0, static_cast<int64_t>(s->size())) : -1;
    if (axis >= 0) length = (*s)[static_cast<size_t>(axis)];
  }
  const auto out_axes = attr_ints(c.node, "scan_output_axes");
  for (size_t o = 0; o < c.out.size() && o < body.size(); ++o) {
    InferredValue v = body[o];
    v.values.reset();
    v.reals.reset();
    if (o >= states && v.shape) {
      const size_t k = o - states;
      const int64_t rank = static_cast<int64_t>(v.shape->size()) + 1;
      const int64_t axis = norm_axis(out_axes && k < out_axes->size() ? (*out_axes)[k] : 0, rank);
      if (axis < 0) v.shape.reset();
      else v.shape->insert(v.shape->begin() + axis, length);
    }
    c.out[o] = v;
  }
}

}  // namespace

void add_control_rules(RuleTable& t) {
  t["If"] = if_rule;
  t["Loop"] = loop;
  t["Scan"] = scan;
}

}  // namespace bnorm::shape_infer
