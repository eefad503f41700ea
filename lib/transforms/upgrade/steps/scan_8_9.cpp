// Scan 8 <-> 9: Scan-8 runs a batch of scans (axis 0 of every input and
// output is the batch; the sequence is axis 1; optional sequence_lens
// first); Scan-9 runs one scan along any axis, in either direction, and
// stacks outputs along any axis. The body (per batch element, per
// iteration) is the same graph in both.
//
//   Up:
//   Before (8):  S, Y = Scan(lens?, S0, X)  directions D, body B
//   After  (9+): S, Y = Scan(S0, X)  num_scan_inputs = states + scans, body
//                  E(s0_b, x_b) { s_b, y_b = Scan(s0_b, x_b)  scan_input_directions D, body B }
//   The outer Scan walks the batch (axis 0 of every input and output), the
//   inner one is the batch element's own scan: the same iterations in the
//   same order, for any batch size, known or not.
//   Precondition: no sequence_lens, or a constant one equal to the sequence
//   length of every scan input (known): a shorter batch element has no
//   form at 9. Else Error naming the node.
//
//   Down:
//   Before (9+): S, Y = Scan(S0, X)  scan_input_axes A, scan_input_directions D, scan_output_axes O
//   After  (8):  S, Y = Squeeze0(Scan("", Unsqueeze0(S0), Unsqueeze0(Transpose_A(X)))  directions D)
//                with Y moved from axis 0 to O by a Transpose after the Squeeze
//   A batch of one. Preconditions: every scan_output_directions 0 (Scan-8
//   always appends); the rank of an input or output read along an axis
//   other than 0 is known. Else Error naming the node.
// Formula: unchanged (ONNX 1.12's adapters only relabelled the shapes, kept
// sequence_lens going up, and wrote the graph's own input shapes wrong).
#include <fmt/format.h>

#include <numeric>

#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

namespace {

// The ints attribute `name`, or `count` zeros (its default) when absent.
std::vector<int64_t> ints_or(const onnx::NodeProto& n, const char* name, size_t count) {
  return attr_ints(n, name).value_or(std::vector<int64_t>(count, 0));
}

const onnx::GraphProto& body_of(const NormSite& s, int values) {
  const auto* body = find_attr(s.node, "body");
  if (!body || !body->has_g()) refuse(s, "it has no body graph");
  if (body->g().input_size() != values) {
    refuse(s, fmt::format("its body has {} inputs where the node gives {} states and scan inputs",
                          body->g().input_size(), values));
  }
  return body->g();
}

// `v`'s type with an unknown dim prepended to its shape (a value stacked once more).
onnx::TypeProto stacked(const onnx::ValueInfoProto& v) {
  onnx::TypeProto t = v.type();
  if (t.has_tensor_type() && t.tensor_type().has_shape()) {
    auto* shape = t.mutable_tensor_type()->mutable_shape();
    onnx::TensorShapeProto with;
    with.add_dim();
    for (const auto& d : shape->dim()) *with.add_dim() = d;
    *shape = with;
  }
  return t;
}

void check_lens(const NormSite& s, int64_t scans) {
  const std::string& lens = s.node.input(0);
  const auto t = constant_input(s, 0);
  const auto values = t ? t->to_i64() : std::nullopt;
  if (!values) {
    refuse(s, fmt::format("sequence_lens '{}' is not a constant: a batch element may be shorter than the sequence, "
                          "which Scan-9 (no sequence_lens) cannot say", lens));
  }
  std::optional<int64_t> length;
  for (int64_t j = 0; j < scans; ++j) {
    const auto dims = s.dims_of(s.node.input(static_cast<int>(s.node.input_size() - scans + j)));
    if (!dims || dims->size() < 2 || (*dims)[1] < 0 || (length && *length != (*dims)[1])) {
      refuse(s, fmt::format("sequence_lens '{}' is given and the sequence length of the scan inputs is not known "
                            "to equal it: Scan-9 has no sequence_lens", lens));
    }
    length = (*dims)[1];
  }
  for (const int64_t v : *values) {
    if (v != *length) {
      refuse(s, fmt::format("sequence_lens '{}' holds {}, shorter than the sequence ({}): Scan-9 has no "
                            "sequence_lens", lens, v, *length));
    }
  }
}

void up(NormSite& s) {
  onnx::NodeProto& n = s.node;
  const int64_t scans = attr_int(n, "num_scan_inputs", 0);
  const int states = n.input_size() - 1 - static_cast<int>(scans);
  if (n.input_size() < 1 || scans < 1 || states < 0) refuse(s, "its inputs do not match num_scan_inputs");
  const onnx::GraphProto& b = body_of(s, states + static_cast<int>(scans));
  if (b.output_size() != n.output_size() || b.output_size() < states) {
    refuse(s, "its outputs do not match its body's");
  }
  if (!n.input(0).empty()) check_lens(s, scans);

  onnx::GraphProto outer;
  outer.set_name(s.fresh(s.stem() + "_per_batch"));
  onnx::NodeProto inner;
  inner.set_op_type("Scan");
  inner.set_name(s.fresh(s.stem() + "_one"));
  for (int i = 0; i < b.input_size(); ++i) {
    auto* in = outer.add_input();
    in->set_name(s.fresh(b.input(i).name() + "_batch"));
    *in->mutable_type() = i < states ? b.input(i).type() : stacked(b.input(i));
    inner.add_input(in->name());
  }
  for (int k = 0; k < b.output_size(); ++k) {
    auto* out = outer.add_output();
    out->set_name(s.fresh(b.output(k).name() + "_batch"));
    *out->mutable_type() = k < states ? b.output(k).type() : stacked(b.output(k));
    inner.add_output(out->name());
  }
  set_int(inner, "num_scan_inputs", scans);
  if (const auto* d = find_attr(n, "directions")) {
    set_ints(inner, "scan_input_directions", std::vector<int64_t>(d->ints().begin(), d->ints().end()));
  }
  *inner.add_attribute() = *find_attr(n, "body");
  *outer.add_node() = std::move(inner);

  remove_attr(n, "directions");
  remove_attr(n, "body");
  set_int(n, "num_scan_inputs", states + scans);
  auto* body = n.add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  *body->mutable_g() = std::move(outer);
  const bool had_lens = !n.input(0).empty();
  n.mutable_input()->erase(n.mutable_input()->begin());
  s.report.set.push_back(fmt::format("the batch walked by an outer Scan over a body holding the Scan of one batch "
                                     "element{}",
                                     had_lens ? "; sequence_lens (the full length) dropped" : ""));
}

// [a, 0, .., a-1, a+1, ..]: axis a first.
std::vector<int64_t> axis_first(int64_t a, int rank) {
  std::vector<int64_t> p{a};
  for (int64_t i = 0; i < rank; ++i)
    if (i != a) p.push_back(i);
  return p;
}

// [1, .., a, 0, a+1, ..]: axis 0 to a.
std::vector<int64_t> first_to_axis(int64_t a, int rank) {
  std::vector<int64_t> p;
  for (int64_t i = 1; i <= a; ++i) p.push_back(i);
  p.push_back(0);
  for (int64_t i = a + 1; i < rank; ++i) p.push_back(i);
  return p;
}

// The rank of scan output `k` (axis `a` given): the node's output's, else its body output's plus one.
int output_rank(const NormSite& s, const onnx::GraphProto& b, int k) {
  if (auto r = s.rank_of(s.node.output(k))) return *r;
  const auto& t = b.output(k).type();
  if (t.has_tensor_type() && t.tensor_type().has_shape()) return t.tensor_type().shape().dim_size() + 1;
  refuse(s, fmt::format("scan output '{}' is stacked along an axis other than 0 and its rank is unknown",
                        s.node.output(k)));
}

void down(NormSite& s) {
  onnx::NodeProto& n = s.node;
  const int64_t scans = attr_int(n, "num_scan_inputs", 0);
  const int states = n.input_size() - static_cast<int>(scans);
  if (scans < 1 || states < 0) refuse(s, "its inputs do not match num_scan_inputs");
  const onnx::GraphProto& b = body_of(s, n.input_size());
  const size_t outs = static_cast<size_t>(std::max(0, n.output_size() - states));
  const auto in_axes = ints_or(n, "scan_input_axes", static_cast<size_t>(scans));
  const auto out_axes = ints_or(n, "scan_output_axes", outs);
  for (const int64_t d : ints_or(n, "scan_output_directions", outs)) {
    if (d != 0) refuse(s, "scan_output_directions holds 1 (prepended outputs): Scan-8 always appends");
  }
  // Match: every rank needed, before any rewrite.
  std::vector<int> in_ranks(static_cast<size_t>(scans), 0), out_ranks(outs, 0);
  for (size_t j = 0; j < in_axes.size() && j < static_cast<size_t>(scans); ++j) {
    if (in_axes[j] == 0) continue;
    const std::string& x = n.input(states + static_cast<int>(j));
    const auto r = s.rank_of(x);
    if (!r) refuse(s, fmt::format("scan input '{}' is read along axis {} and its rank is unknown", x, in_axes[j]));
    in_ranks[j] = *r;
  }
  for (size_t k = 0; k < out_axes.size() && k < outs; ++k) {
    if (out_axes[k] != 0) out_ranks[k] = output_rank(s, b, states + static_cast<int>(k));
  }

  auto unsqueeze0 = [&](const std::string& v) {
    const std::string out = s.fresh(v + "_batch");
    set_ints(s.add_before("Unsqueeze", {v}, {out}), "axes", {0});
    return out;
  };
  std::vector<std::string> inputs{""};
  for (int i = 0; i < n.input_size(); ++i) {
    std::string v = n.input(i);
    const size_t j = static_cast<size_t>(i - states);
    if (i >= states && j < in_axes.size() && in_axes[j] != 0) {
      const std::string moved = s.fresh(v + "_axis_first");
      set_ints(s.add_before("Transpose", {v}, {moved}), "perm", axis_first(in_axes[j], in_ranks[j]));
      v = moved;
    }
    inputs.push_back(unsqueeze0(v));
  }
  n.clear_input();
  for (const auto& v : inputs) n.add_input(v);
  for (int k = 0; k < n.output_size(); ++k) {
    const std::string y = n.output(k);
    if (y.empty()) continue;
    const std::string batched = s.fresh(y + "_batch");
    n.set_output(k, batched);
    const size_t j = static_cast<size_t>(k - states);
    const bool move = k >= states && j < out_axes.size() && out_axes[j] != 0;
    const std::string squeezed = move ? s.fresh(y + "_axis_first") : y;
    set_ints(s.add_after("Squeeze", {batched}, {squeezed}), "axes", {0});
    if (move) set_ints(s.add_after("Transpose", {squeezed}, {y}), "perm", first_to_axis(out_axes[j], out_ranks[j]));
  }
  if (const auto* d = find_attr(n, "scan_input_directions")) {
    const std::vector<int64_t> dirs(d->ints().begin(), d->ints().end());
    remove_attr(n, "scan_input_directions");
    if (std::any_of(dirs.begin(), dirs.end(), [](int64_t v) { return v != 0; })) set_ints(n, "directions", dirs);
  }
  for (const char* a : {"scan_input_axes", "scan_output_axes", "scan_output_directions"}) remove_attr(n, a);
  s.report.set.push_back("a batch of one: inputs unsqueezed and outputs squeezed at axis 0; no sequence_lens");
}

}  // namespace

const Step scan_8_9{"scan_8_9", "scan_8_9", up, down};

}  // namespace bnorm::steps
