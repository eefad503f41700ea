// Scan: version 8, and 9 (same meaning in 11, 16, 19, 21, 23, 24, 25 but
// for negative axes, allowed from 11).
//
// Scan-9+ (init_1..init_N, scan_1..scan_M)<body, num_scan_inputs = M,
// scan_input_axes, scan_input_directions, scan_output_axes,
// scan_output_directions>: with L the size of every scan input along its
// axis, for t in 0..L-1 the body maps (states, scan_j sliced at t along
// axis_j — at L-1-t when reversed — without that axis) to (states, so_1..K);
// the results are the final states and each so_k stacked over the
// iterations on a new axis out_axis_k (in reverse order when its direction
// is 1, i.e. prepended).
//
// Scan-8 (sequence_lens?, init..., scan...)<body, num_scan_inputs,
// directions>: axis 0 of every input is a batch, run separately: the body
// sees batch b's states and scan_j[b] sliced along axis 1 (the sequence
// axis); batch b runs sequence_lens[b] steps (default: all L). Outputs are
// the final states stacked over the batch, and scan outputs of shape
// [B, L, ...].
//
// Decisions: the spec leaves Scan-8's scan outputs past a batch's length
// undefined; bnorm writes zeros there. Where a reversed scan input meets a
// shorter sequence_lens the spec does not say which steps it walks: bnorm
// refuses it (unsupported). States and scan outputs must keep their type and
// shape across iterations (the spec requires it); with no iteration at all,
// a scan output takes its shape from the body's declared output (refused
// when undeclared).
#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "model/attrs.h"
#include "eval/ops/control/control.h"
#include "eval/ops/control/ops.h"

namespace bnorm::eval {

namespace {

struct ScanInput {
  const Tensor* t;
  int64_t axis;
  bool reverse;
};

struct ScanResult {
  std::vector<Tensor> states;
  std::vector<std::vector<Tensor>> outs;  // per scan output, per iteration
};

void same_kind(const Tensor& was, const Tensor& now, const std::string& what) {
  if (was.dtype != now.dtype || was.dims != now.dims) {
    fail(ErrorKind::input, "{} changed from {} {} to {} {}", what, dtype_name(was.dtype), shape_str(was.dims),
         dtype_name(now.dtype), shape_str(now.dims));
  }
}

// Runs `len` steps of `body` from `states`.
ScanResult run_scan(Subgraph& body, std::vector<Tensor> states, const std::vector<ScanInput>& ins, int64_t len,
                    const std::string& where) {
  ScanResult r;
  const size_t n = states.size();
  const size_t k_out = static_cast<size_t>(body.output_count()) - n;
  r.outs.resize(k_out);
  std::vector<int64_t> bytes(k_out, 0);
  for (int64_t t = 0; t < len; ++t) {
    std::vector<Value> in;
    for (const Tensor& s : states) in.push_back(Value::of(s));
    for (const ScanInput& s : ins) in.push_back(Value::of(slice_axis(*s.t, s.axis, s.reverse ? len - 1 - t : t, 1, true)));
    std::vector<Value> out = body.run(std::move(in), fmt::format("{}iteration {}", where, t));
    for (size_t k = 0; k < out.size(); ++k) {
      if (!out[k].is_tensor()) fail(ErrorKind::input, "body output {} is {}; Scan works on tensors", k, out[k].describe());
      Tensor& v = out[k].tensor;
      if (k < n) {
        same_kind(states[k], v, fmt::format("state {}", k));
        states[k] = std::move(v);
        continue;
      }
      auto& acc = r.outs[k - n];
      if (!acc.empty()) same_kind(acc[0], v, fmt::format("scan output {}", k - n));
      bytes[k - n] += static_cast<int64_t>(v.bytes.size());
      check_total_bytes(bytes[k - n], fmt::format("scan output {}", k - n));
      acc.push_back(std::move(v));
    }
  }
  r.states = std::move(states);
  return r;
}

// The per-iteration shape of scan output k, from the body's declaration.
Tensor declared_element(const onnx::ValueInfoProto& vi) {
  const auto& t = vi.type();
  bool known = t.has_tensor_type() && t.tensor_type().elem_type() != 0 && t.tensor_type().has_shape();
  std::vector<int64_t> dims;
  for (int i = 0; known && i < t.tensor_type().shape().dim_size(); ++i) {
    const auto& d = t.tensor_type().shape().dim(i);
    known = d.has_dim_value() && d.dim_value() >= 0;
    dims.push_back(d.dim_value());
  }
  if (!known) fail(ErrorKind::unsupported, "no iteration ran and the body does not declare the type and shape of scan output '{}'", vi.name());
  return Tensor(static_cast<DType>(t.tensor_type().elem_type()), dims);
}

// An attribute list of `count` ints (default `fallback` each).
std::vector<int64_t> int_list(const OpContext& ctx, const char* name, size_t count, int64_t fallback) {
  auto v = attr_ints(*ctx.node, name);
  if (!v) return std::vector<int64_t>(count, fallback);
  if (v->size() != count) fail(ErrorKind::input, "attribute '{}' has {} values, needs {}", name, v->size(), count);
  return *v;
}

bool direction(int64_t d, const char* what) {
  if (d != 0 && d != 1) fail(ErrorKind::input, "attribute '{}' holds {}; directions are 0 or 1", what, d);
  return d == 1;
}

// `axis` for rank `rank`: [0, rank) in Scan-9, [-rank, rank) from 11.
int64_t scan_axis(int64_t axis, int64_t rank, int version, const char* what) {
  const int64_t lo = version >= 11 ? -rank : 0;
  if (axis < lo || axis >= rank) fail(ErrorKind::input, "attribute '{}' holds {}, out of range [{}, {}] for rank {}", what, axis, lo, rank - 1, rank);
  return axis < 0 ? axis + rank : axis;
}

struct Shape {
  size_t n = 0, m = 0, k = 0;  // states, scan inputs, scan outputs
};

Shape scan_shape(const OpContext& ctx, const onnx::GraphProto& g, size_t first_input) {
  const int64_t m = attr_int(*ctx.node, "num_scan_inputs", -1);
  const auto given = static_cast<int64_t>(ctx.input_count() - first_input);
  if (m < 1 || m > given) fail(ErrorKind::input, "attribute 'num_scan_inputs' is {}, the node has {} state and scan inputs", m, given);
  Shape s;
  s.m = static_cast<size_t>(m);
  s.n = static_cast<size_t>(given - m);
  if (g.input_size() != static_cast<int>(s.n + s.m) || g.output_size() < static_cast<int>(s.n)) {
    fail(ErrorKind::input, "the body has {} inputs and {} outputs; with {} states and {} scan inputs it needs {} inputs and at least {} outputs",
         g.input_size(), g.output_size(), s.n, s.m, s.n + s.m, s.n);
  }
  s.k = g.output_size() - s.n;
  if (ctx.output_count() > static_cast<int>(s.n + s.k)) {
    fail(ErrorKind::input, "the node has {} outputs, its body gives {}", ctx.output_count(), s.n + s.k);
  }
  return s;
}

}  // namespace

Tensors op_scan9(const OpContext& ctx) {
  const onnx::GraphProto& g = attr_graph(*ctx.node, "body");
  const Shape s = scan_shape(ctx, g, 0);
  const auto in_axes = int_list(ctx, "scan_input_axes", s.m, 0);
  const auto in_dirs = int_list(ctx, "scan_input_directions", s.m, 0);
  const auto out_axes = int_list(ctx, "scan_output_axes", s.k, 0);
  const auto out_dirs = int_list(ctx, "scan_output_directions", s.k, 0);
  std::vector<Tensor> states;
  for (size_t i = 0; i < s.n; ++i) states.push_back(ctx.required(i, "initial_state_and_scan_inputs"));
  std::vector<ScanInput> ins;
  int64_t len = -1;
  for (size_t j = 0; j < s.m; ++j) {
    const Tensor& t = ctx.required(s.n + j, "initial_state_and_scan_inputs");
    const int64_t axis = scan_axis(in_axes[j], static_cast<int64_t>(t.dims.size()), ctx.version, "scan_input_axes");
    if (len >= 0 && t.dims[axis] != len) fail(ErrorKind::input, "scan input {} has {} steps, scan input 0 has {}", j, t.dims[axis], len);
    len = t.dims[axis];
    ins.push_back({&t, axis, direction(in_dirs[j], "scan_input_directions")});
  }
  auto body = ctx.subgraph(g, "body");
  ScanResult r = run_scan(*body, std::move(states), ins, len, "");
  Tensors out(s.n + s.k);
  for (size_t i = 0; i < s.n; ++i) out[i] = std::move(r.states[i]);
  for (size_t k = 0; k < s.k; ++k) {
    auto& parts = r.outs[k];
    const bool prepend = direction(out_dirs[k], "scan_output_directions");
    const Tensor element = parts.empty() ? declared_element(g.output(static_cast<int>(s.n + k))) : Tensor();
    const auto rank = static_cast<int64_t>((parts.empty() ? element : parts[0]).dims.size()) + 1;
    const int64_t axis = scan_axis(out_axes[k], rank, ctx.version, "scan_output_axes");
    if (!ctx.wants(static_cast<int>(s.n + k))) continue;
    if (parts.empty()) {
      std::vector<int64_t> dims = element.dims;
      dims.insert(dims.begin() + axis, 0);
      out[s.n + k] = Tensor(element.dtype, dims);
      continue;
    }
    if (prepend) std::reverse(parts.begin(), parts.end());
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : parts) ptrs.push_back(&t);
    out[s.n + k] = join_tensors(ptrs, axis, true, fmt::format("scan output {}", k));
  }
  return out;
}

namespace {

// Scan-8's batch b: its states' and scan outputs' rows.
struct Batch8 {
  std::vector<Tensor> states;
  std::vector<Tensor> outs;  // [L, ...] each
};

Batch8 run_batch8(const OpContext& ctx, Subgraph& body, const onnx::GraphProto& g, const Shape& s, int64_t b, int64_t len,
                  int64_t steps, const std::vector<bool>& reverse) {
  std::vector<Tensor> states;
  for (size_t i = 0; i < s.n; ++i) states.push_back(slice_axis(*ctx.input(1 + i), 0, b, 1, true));
  std::vector<Tensor> rows;  // scan_j[b]: [L, ...]
  for (size_t j = 0; j < s.m; ++j) rows.push_back(slice_axis(*ctx.input(1 + s.n + j), 0, b, 1, true));
  std::vector<ScanInput> ins;
  for (size_t j = 0; j < s.m; ++j) {
    if (reverse[j] && steps != len) fail(ErrorKind::unsupported, "a reversed scan input with a sequence_lens shorter than the sequence");
    ins.push_back({&rows[j], 0, reverse[j]});
  }
  ScanResult r = run_scan(body, std::move(states), ins, steps, fmt::format("batch {}, ", b));
  Batch8 out;
  out.states = std::move(r.states);
  for (size_t k = 0; k < s.k; ++k) {
    auto& parts = r.outs[k];
    const Tensor pad = parts.empty() ? declared_element(g.output(static_cast<int>(s.n + k))) : Tensor(parts[0].dtype, parts[0].dims);
    while (static_cast<int64_t>(parts.size()) < len) parts.push_back(pad);
    if (parts.empty()) {
      std::vector<int64_t> dims = pad.dims;
      dims.insert(dims.begin(), 0);
      out.outs.push_back(Tensor(pad.dtype, dims));
      continue;
    }
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : parts) ptrs.push_back(&t);
    out.outs.push_back(join_tensors(ptrs, 0, true, fmt::format("scan output {}", k)));
  }
  return out;
}

}  // namespace

Tensors op_scan8(const OpContext& ctx) {
  const onnx::GraphProto& g = attr_graph(*ctx.node, "body");
  if (ctx.input_count() < 1) fail(ErrorKind::input, "Scan-8 needs its sequence_lens input (it may be empty)");
  const Shape s = scan_shape(ctx, g, 1);
  std::vector<bool> reverse;
  for (int64_t d : int_list(ctx, "directions", s.m, 0)) reverse.push_back(direction(d, "directions"));
  int64_t batch = -1, len = -1;
  for (size_t j = 0; j < s.m; ++j) {
    const Tensor& t = ctx.required(1 + s.n + j, "initial_state_and_scan_inputs");
    if (t.dims.size() < 2) fail(ErrorKind::input, "scan input {} needs a batch and a sequence axis, has shape {}", j, shape_str(t.dims));
    if (j > 0 && (t.dims[0] != batch || t.dims[1] != len)) {
      fail(ErrorKind::input, "scan input {} has shape {}; scan input 0 has batch {} and length {}", j, shape_str(t.dims), batch, len);
    }
    batch = t.dims[0];
    len = t.dims[1];
  }
  for (size_t i = 0; i < s.n; ++i) {
    const Tensor& t = ctx.required(1 + i, "initial_state_and_scan_inputs");
    if (t.dims.empty() || t.dims[0] != batch) fail(ErrorKind::input, "state {} has shape {}, the batch is {}", i, shape_str(t.dims), batch);
  }
  std::vector<int64_t> steps(static_cast<size_t>(batch), len);
  if (const Tensor* lens = ctx.input(0)) {
    if (lens->dtype != DType::int64 || lens->dims != std::vector<int64_t>{batch}) {
      fail(ErrorKind::input, "input 'sequence_lens' must be int64 of shape [{}], is {} {}", batch, dtype_name(lens->dtype), shape_str(lens->dims));
    }
    for (int64_t b = 0; b < batch; ++b) {
      steps[b] = lens->data<int64_t>()[b];
      if (steps[b] < 0 || steps[b] > len) fail(ErrorKind::input, "sequence_lens[{}] is {}, outside [0, {}]", b, steps[b], len);
    }
  }
  auto body = ctx.subgraph(g, "body");
  std::vector<Batch8> rows;
  for (int64_t b = 0; b < batch; ++b) rows.push_back(run_batch8(ctx, *body, g, s, b, len, steps[b], reverse));
  Tensors out(s.n + s.k);
  for (size_t k = 0; k < s.n + s.k; ++k) {
    if (!ctx.wants(static_cast<int>(k))) continue;
    std::vector<const Tensor*> parts;
    for (const Batch8& r : rows) parts.push_back(k < s.n ? &r.states[k] : &r.outs[k - s.n]);
    if (parts.empty()) fail(ErrorKind::unsupported, "a Scan-8 over an empty batch");
    out[k] = join_tensors(parts, 0, true, fmt::format("output {}", k));
  }
  return out;
}

}  // namespace bnorm::eval
