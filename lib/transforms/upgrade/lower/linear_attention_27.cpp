// LinearAttention-27 below opset 27: its recurrence as a Scan over the
// sequence, the state of every key/value head carried from token to token
// (the form of ONNX's own function body).
//
//   Before: output, present_state? = LinearAttention(query, key, value, past_state?, decay?, beta?)
//           q_num_heads Hq, kv_num_heads Hkv, update_rule, scale
//   After:  Q = Reshape(query, [0, 0, Hq, dk]); K, V, decay and beta likewise (per head: a last dim of 1)
//           S0 = past_state, or Expand(0, [B, Hkv, dk, dv])
//           present_state, output = Scan(S0, Q, K, V, decay?, beta?)  scan axes 1, output axis 1, with body
//             (S; q, k, v, g?, b?):
//               S  = Mul(S, Unsqueeze(Exp(g), [3]))                             gated rules
//               kv = Mul(Unsqueeze(k, [3]), Unsqueeze(v, [2]))                   linear, gated
//               kv = Mul(Mul(Unsqueeze(k, [3]), Sub(Unsqueeze(v, [2]),
//                        MatMul(Unsqueeze(k, [2]), S))), Unsqueeze(b, [3]))      delta rules
//               S' = Add(S, kv)
//               o  = Reshape(Mul(MatMul(Reshape(q, [0, Hkv, g, dk]), S'), scale), [0, -1])
//
// Formula: LinearAttention-27's (Changelog.md): S_t from S_{t-1} by the
// rule, o_t = scale * q_t^T S_t, query head h reading key/value head
// h / (Hq / Hkv). float16 and bfloat16 compute in float between Casts (the
// function body's CastLike). bnorm's evaluator runs the recurrence in float64 and
// rounds once; the ops round after each node, so the lowered model agrees
// within float rounding (`--verify` judges it), as ONNX's expanded form.
// Preconditions (each an Error naming the node): the three inputs rank 3
// with their last dims known (dk and dv); past_state, when given, of
// query's type; a known update_rule with the inputs it reads; decay's and
// beta's last dims known; a target of opset 9 or later (Scan's axes).
#include <fmt/format.h>

#include <cmath>

#include "model/attrs.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {

// A Scan body under construction: its nodes, initializers and declared inputs/outputs.
struct Body {
  onnx::GraphProto g;
  int next = 0;
  std::string value(const std::string& what) { return fmt::format("la_{}_{}", what, next++); }
  std::string add(const std::string& op, std::vector<std::string> in, const std::string& what) {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    const std::string o = value(what);
    n->add_output(o);
    return o;
  }
  std::string ints(const std::vector<int64_t>& v, const std::string& what) {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name(value(what));
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }
  void declare(onnx::ValueInfoProto* vi, const std::string& name, DType t) {
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(t));
  }
};

int64_t last_dim(const NormSite& s, const std::string& v, const char* what) {
  const auto d = s.dims_of(v);
  if (!d || d->size() != 3 || d->back() < 0) refuse(s, fmt::format("the last dim of {} '{}' is not known", what, v));
  return d->back();
}

}  // namespace

void lower_linear_attention_27(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_op(s, "Scan with its axes", 9);
  require_broadcasting(s);
  const int64_t hq = attr_int(n, "q_num_heads", 0), hkv = attr_int(n, "kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0) refuse(s, fmt::format("q_num_heads {} and kv_num_heads {}", hq, hkv));
  const std::string rule = attr_string(n, "update_rule", "gated_delta");
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (!gated && !delta && rule != "linear") refuse(s, fmt::format("update_rule '{}' is not one LinearAttention-27 has", rule));
  if (gated && input_at(n, 4).empty()) refuse(s, fmt::format("update_rule '{}' needs decay", rule));
  if (delta && input_at(n, 5).empty()) refuse(s, fmt::format("update_rule '{}' needs beta", rule));
  const DType t = known_type(s, n.input(0), "input query");
  if (!input_at(n, 3).empty() && known_type(s, input_at(n, 3), "input past_state") != t) {
    refuse(s, "past_state's type is not query's: the state would have to be computed in another type");
  }
  const int64_t dk = last_dim(s, n.input(0), "query") / hq, dv = last_dim(s, n.input(2), "value") / hkv;
  const int64_t g = hq / hkv;
  const double scale_attr = attr_float(n, "scale", 0.0f);
  const double scale = scale_attr != 0 ? scale_attr : 1.0 / std::sqrt(static_cast<double>(dk));

  Lowering l{s, opset};
  // float16 and bfloat16 compute in float between Casts, as the function body does (its CastLike at the end).
  if (t == DType::bfloat16) require_op(s, "Cast of bfloat16", 13);
  const DType u = DType::float32;
  const auto as_u = [&](const std::string& x, const std::string& what) { return l.cast(x, t, u, what + "_float"); };
  // The scanned inputs, (B, T, heads, size) each.
  std::vector<std::string> scanned{l.reshape(as_u(n.input(0), "q"), {0, 0, hq, dk}, "q4"),
                                   l.reshape(as_u(n.input(1), "k"), {0, 0, hkv, dk}, "k4"),
                                   l.reshape(as_u(n.input(2), "v"), {0, 0, hkv, dv}, "v4")};
  if (gated) {
    const int64_t d = last_dim(s, input_at(n, 4), "decay");
    if (d != hkv * dk && d != hkv) refuse(s, fmt::format("decay's last dim {} is neither {} nor {}", d, hkv * dk, hkv));
    scanned.push_back(l.reshape(as_u(input_at(n, 4), "decay"), {0, 0, hkv, d == hkv * dk ? dk : 1}, "decay4"));
  }
  if (delta) {
    const int64_t d = last_dim(s, input_at(n, 5), "beta");
    if (d != hkv && d != 1) refuse(s, fmt::format("beta's last dim {} is neither {} nor 1", d, hkv));
    scanned.push_back(l.reshape(as_u(input_at(n, 5), "beta"), {0, 0, d, 1}, "beta4"));
  }
  std::string state0 = input_at(n, 3).empty() ? "" : as_u(input_at(n, 3), "past_state");
  if (state0.empty()) {
    const std::string batch = l.add("Gather", {l.add("Shape", {n.input(0)}, "query_shape"),
                                               s.add_int64s(s.stem() + "_batch_axis", {0})},
                                    "batch");
    const std::string shape = l.value("state_shape");
    set_int(s.add_before("Concat", {batch, s.add_int64s(s.stem() + "_state_dims", {hkv, dk, dv})}, {shape}), "axis", 0);
    state0 = l.add("Expand", {l.scalar(u, 0, "zero"), shape}, "state0");
  }

  Body b;
  const std::string st = "la_state_in", q = "la_q", k = "la_k", v = "la_v", gt = "la_g", bt = "la_b";
  b.declare(b.g.add_input(), st, u);
  for (const std::string& x : {q, k, v}) b.declare(b.g.add_input(), x, u);
  if (gated) b.declare(b.g.add_input(), gt, u);
  if (delta) b.declare(b.g.add_input(), bt, u);
  const std::string ax2 = b.ints({2}, "axis2"), ax3 = b.ints({3}, "axis3");
  std::string state = st;
  if (gated) state = b.add("Mul", {st, b.add("Unsqueeze", {b.add("Exp", {gt}, "exp_g"), ax3}, "g4")}, "decayed");
  const std::string k_col = b.add("Unsqueeze", {k, ax3}, "k_col");  // (B, Hkv, dk, 1)
  const std::string v_row = b.add("Unsqueeze", {v, ax2}, "v_row");  // (B, Hkv, 1, dv)
  std::string update;
  if (delta) {
    const std::string predicted = b.add("MatMul", {b.add("Unsqueeze", {k, ax2}, "k_row"), state}, "predicted");
    const std::string error = b.add("Sub", {v_row, predicted}, "error");
    update = b.add("Mul", {b.add("Mul", {k_col, error}, "k_error"), b.add("Unsqueeze", {bt, ax3}, "b4")}, "update");
  } else {
    update = b.add("Mul", {k_col, v_row}, "update");
  }
  const std::string next = b.add("Add", {state, update}, "state_out");
  const std::string grouped = b.add("Reshape", {q, b.ints({0, hkv, g, dk}, "q_groups")}, "q_grouped");
  onnx::TensorProto sc = to_proto(Tensor::from_f64(u, {}, {scale}));
  sc.set_name(b.value("scale"));
  *b.g.add_initializer() = sc;
  const std::string o = b.add("Mul", {b.add("MatMul", {grouped, next}, "o_groups"), sc.name()}, "o_scaled");
  const std::string out = b.add("Reshape", {o, b.ints({0, -1}, "o_flat")}, "o");
  b.declare(b.g.add_output(), next, u);
  b.declare(b.g.add_output(), out, u);
  b.g.set_name(s.stem() + "_step");

  std::vector<std::string> scan_in{state0};
  scan_in.insert(scan_in.end(), scanned.begin(), scanned.end());
  const std::string present = output_at(n, 1).empty() ? l.value("present_state") : n.output(1);
  const bool wide = t != u;  // the outputs are cast back
  const std::string present_u = wide ? l.value("present_float") : present;
  const std::string output_u = wide ? l.value("output_float") : n.output(0);
  onnx::NodeProto& scan = s.add_before("Scan", scan_in, {present_u, output_u});
  set_int(scan, "num_scan_inputs", static_cast<int64_t>(scanned.size()));
  set_ints(scan, "scan_input_axes", std::vector<int64_t>(scanned.size(), 1));
  set_ints(scan, "scan_output_axes", {1});
  onnx::AttributeProto* body = scan.add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  *body->mutable_g() = b.g;
  if (wide) {
    l.cast(output_u, u, t, "output", n.output(0));
    if (!output_at(n, 1).empty()) l.cast(present_u, u, t, "present", present);
  }
}

}  // namespace bnorm::steps
