// Loop (1, 11, 13, 16, 19, 21, 23, 24, 25) and SequenceMap (17).
//
// Loop(M?, cond?, v_initial...)<body>: the body has inputs (iteration_num,
// cond, v...) and outputs (cond, v..., scan...). It runs
//   for (i = 0; (M absent || i < M) && cond; ++i) (cond, v..., s...) = body(i, cond, v...)
// and returns the last v... (the initial ones after zero iterations) and
// each scan output stacked on a new leading axis. Versions differ only in
// the kinds a loop-carried value may have: tensors (1, 11), also sequences
// (13), also optionals (16+); scan outputs are tensors in every version.
// Loop-1 and Loop-11 read the same (11 reworded the text).
//
// Decisions where the spec and the runtimes part:
// - Without the cond input, the spec ignores the body's cond output (its
//   table: "cond = ... // ignored") while onnxruntime and ONNX's reference
//   stop when it turns false: bnorm refuses that case (unsupported) rather
//   than pick one. The body's cond input is then true.
// - A negative M is refused (input error); iteration_num is int64.
// - A loop stops being run after kMaxLoopIterations (op.h) iterations:
//   unsupported, so a loop that never ends is reported, not hung on. An M
//   above the limit without cond is refused before running.
// - After zero iterations a scan output has shape [0, d...] from the
//   body's declared output type; undeclared, it is refused (unsupported).
// - Scan outputs must keep their type and shape across iterations.
//
// SequenceMap(seq, extra...)<body>: for each position i of the first
// sequence, runs the body on (seq[i], extra_j[i] for sequences, extra_j for
// tensors) and appends its outputs (tensors) to the output sequences.
// Every sequence input must have the first one's length.
#include <fmt/format.h>

#include "core/error.h"
#include "model/attrs.h"
#include "eval/ops/control/control.h"
#include "eval/ops/control/ops.h"

namespace bnorm::eval {

namespace {

using Kind = Value::Kind;

Tensor int64_scalar(int64_t v) {
  Tensor t(DType::int64, {});
  t.data<int64_t>()[0] = v;
  return t;
}

Tensor bool_scalar(bool v) {
  Tensor t(DType::boolean, {});
  t.bytes[0] = v;
  return t;
}

bool read_bool(const Value& v, const char* what) {
  if (!v.is_tensor() || v.tensor.dtype != DType::boolean || v.tensor.numel() != 1) {
    fail(ErrorKind::input, "{} must be one bool, is {}{}", what, v.describe(),
         v.is_tensor() ? fmt::format(" of type {} shape {}", dtype_name(v.tensor.dtype), shape_str(v.tensor.dims)) : "");
  }
  return v.tensor.bytes[0] != 0;
}

// A loop-carried value's kind must be one Loop-`version` allows.
void check_carried(const Value& v, int version, size_t k) {
  const bool ok = v.is_tensor() || (v.kind == Kind::sequence && version >= 13) || version >= 16;
  if (!ok) fail(ErrorKind::input, "loop-carried value {} is {}; Loop-{} carries {}", k, v.describe(), version, version < 13 ? "tensors" : "tensors and sequences");
}

// A scan output with no iteration: [0, declared dims...] of the declared type.
Tensor empty_scan_output(const onnx::ValueInfoProto& vi) {
  const auto& t = vi.type();
  bool known = t.has_tensor_type() && t.tensor_type().elem_type() != 0 && t.tensor_type().has_shape();
  std::vector<int64_t> dims{0};
  for (int i = 0; known && i < t.tensor_type().shape().dim_size(); ++i) {
    const auto& d = t.tensor_type().shape().dim(i);
    known = d.has_dim_value() && d.dim_value() >= 0;
    dims.push_back(d.dim_value());
  }
  if (!known) fail(ErrorKind::unsupported, "the loop ran no iteration and the body does not declare the type and shape of scan output '{}'", vi.name());
  return Tensor(static_cast<DType>(t.tensor_type().elem_type()), dims);
}

// Scan output values of every iteration, checked to agree, within limits.
struct Accumulated {
  std::vector<Tensor> parts;
  int64_t bytes = 0;

  void add(Value v, size_t k, const std::string& what) {
    if (!v.is_tensor()) fail(ErrorKind::input, "scan output {} is {}; scan outputs are tensors", k, v.describe());
    if (!parts.empty() && (v.tensor.dtype != parts[0].dtype || v.tensor.dims != parts[0].dims)) {
      fail(ErrorKind::input, "scan output {} changed from {} {} to {} {}", k, dtype_name(parts[0].dtype),
           shape_str(parts[0].dims), dtype_name(v.tensor.dtype), shape_str(v.tensor.dims));
    }
    bytes += static_cast<int64_t>(v.tensor.bytes.size());
    check_total_bytes(bytes, what);
    parts.push_back(std::move(v.tensor));
  }
};

struct LoopControl {
  bool has_m = false;
  int64_t m = 0;
  bool has_cond = false;
  bool cond = true;
};

LoopControl loop_control(const OpContext& ctx) {
  LoopControl c;
  if (const Tensor* m = tensor_input(ctx, 0, "M")) {
    if (m->dtype != DType::int64 || m->numel() != 1) {
      fail(ErrorKind::input, "input 'M' must be one int64, is {} of shape {}", dtype_name(m->dtype), shape_str(m->dims));
    }
    c.has_m = true;
    c.m = m->data<int64_t>()[0];
    if (c.m < 0) fail(ErrorKind::input, "input 'M' (the trip count) is negative: {}", c.m);
  }
  if (const Value* cond = ctx.value(1)) {
    c.has_cond = true;
    c.cond = read_bool(*cond, "input 'cond'");
  }
  if (!c.has_cond && (!c.has_m || c.m > kMaxLoopIterations)) {
    fail(ErrorKind::unsupported, "a Loop without 'cond' running {} iterations: over bnorm's limit of {}",
         c.has_m ? std::to_string(c.m) : "unbounded", kMaxLoopIterations);
  }
  return c;
}

}  // namespace

Tensors op_loop(const OpContext& ctx) {
  const onnx::GraphProto& g = attr_graph(*ctx.node, "body");
  if (ctx.input_count() < 2) fail(ErrorKind::input, "Loop needs the inputs M and cond (either may be empty)");
  const size_t n = ctx.input_count() - 2;
  if (g.input_size() != static_cast<int>(n) + 2) {
    fail(ErrorKind::input, "the body has {} inputs; with {} loop-carried values it needs {}", g.input_size(), n, n + 2);
  }
  if (g.output_size() < static_cast<int>(n) + 1) {
    fail(ErrorKind::input, "the body has {} outputs; with {} loop-carried values it needs at least {}", g.output_size(), n, n + 1);
  }
  const size_t k_scan = g.output_size() - 1 - n;
  if (ctx.output_count() > static_cast<int>(n + k_scan)) {
    fail(ErrorKind::input, "the node has {} outputs, its body gives {} loop-carried and {} scan outputs", ctx.output_count(), n, k_scan);
  }
  const LoopControl c = loop_control(ctx);
  std::vector<Value> carried;
  for (size_t k = 0; k < n; ++k) {
    carried.push_back(value_input(ctx, k + 2, "v_initial"));
    check_carried(carried.back(), ctx.version, k);
  }
  std::vector<Accumulated> scans(k_scan);
  const auto body = ctx.subgraph(g, "body");
  bool cond = c.cond;
  for (int64_t i = 0; (!c.has_m || i < c.m) && cond; ++i) {
    if (i >= kMaxLoopIterations) fail(ErrorKind::unsupported, "the Loop did not end within bnorm's limit of {} iterations", kMaxLoopIterations);
    std::vector<Value> in{Value::of(int64_scalar(i)), Value::of(bool_scalar(cond))};
    for (Value& v : carried) in.push_back(std::move(v));
    std::vector<Value> out = body->run(std::move(in), fmt::format("iteration {}", i));
    const bool next = read_bool(out[0], "the body's cond output");
    if (c.has_cond) {
      cond = next;
    } else if (!next) {
      fail(ErrorKind::unsupported, "the body's cond turned false at iteration {} of a Loop without input 'cond': the spec ignores it, onnxruntime stops", i);
    }
    carried.clear();
    for (size_t k = 0; k < n; ++k) {
      check_carried(out[1 + k], ctx.version, k);
      carried.push_back(std::move(out[1 + k]));
    }
    for (size_t k = 0; k < k_scan; ++k) scans[k].add(std::move(out[1 + n + k]), k, fmt::format("scan output {}", k));
  }
  Tensors result(n + k_scan);
  for (size_t k = 0; k < n && static_cast<int>(k) < ctx.output_count(); ++k) {
    if (carried[k].is_tensor()) result[k] = std::move(carried[k].tensor);
    else ctx.set_output(static_cast<int>(k), std::move(carried[k]));
  }
  for (size_t k = 0; k < k_scan && static_cast<int>(n + k) < ctx.output_count(); ++k) {
    if (!ctx.wants(static_cast<int>(n + k))) continue;
    if (scans[k].parts.empty()) {
      result[n + k] = empty_scan_output(g.output(static_cast<int>(1 + n + k)));
      continue;
    }
    std::vector<const Tensor*> parts;
    for (const Tensor& t : scans[k].parts) parts.push_back(&t);
    result[n + k] = join_tensors(parts, 0, true, fmt::format("scan output {}", k));
  }
  return result;
}

Tensors op_sequence_map(const OpContext& ctx) {
  const onnx::GraphProto& g = attr_graph(*ctx.node, "body");
  const size_t inputs = ctx.input_count();
  const Value& first = sequence_input(ctx, 0, "input_sequence");
  if (g.input_size() != static_cast<int>(inputs) || g.output_size() != ctx.output_count()) {
    fail(ErrorKind::input, "the body has {} inputs and {} outputs, the node {} and {}", g.input_size(), g.output_size(),
         inputs, ctx.output_count());
  }
  const size_t len = first.items.size();
  for (size_t j = 0; j < inputs; ++j) {
    const Value& v = value_input(ctx, j, "additional_inputs");
    if (v.kind == Kind::optional) fail(ErrorKind::input, "input {} is {}; SequenceMap takes tensors and sequences", j, v.describe());
    if (v.kind == Kind::sequence && v.items.size() != len) {
      fail(ErrorKind::input, "input {} is a sequence of {} tensors, input 0 of {}", j, v.items.size(), len);
    }
  }
  std::vector<std::vector<Tensor>> outs(g.output_size());
  std::vector<int64_t> bytes(g.output_size(), 0);
  const auto body = ctx.subgraph(g, "body");
  for (size_t i = 0; i < len; ++i) {
    std::vector<Value> in;
    for (size_t j = 0; j < inputs; ++j) {
      const Value& v = *ctx.value(j);
      in.push_back(v.kind == Kind::sequence ? Value::of(v.items[i]) : v);
    }
    std::vector<Value> out = body->run(std::move(in), fmt::format("position {}", i));
    for (size_t k = 0; k < out.size(); ++k) {
      if (!out[k].is_tensor()) fail(ErrorKind::input, "body output {} is {}; SequenceMap collects tensors", k, out[k].describe());
      bytes[k] += static_cast<int64_t>(out[k].tensor.bytes.size());
      check_total_bytes(bytes[k], fmt::format("output sequence {}", k));
      outs[k].push_back(std::move(out[k].tensor));
    }
  }
  for (int k = 0; k < ctx.output_count(); ++k) {
    const auto& t = g.output(k).type();
    DType elem = outs[k].empty() ? DType::undefined : outs[k][0].dtype;
    if (outs[k].empty() && t.has_tensor_type()) elem = static_cast<DType>(t.tensor_type().elem_type());
    ctx.set_output(k, Value::sequence(std::move(outs[k]), elem));
  }
  return Tensors(ctx.output_count());
}

}  // namespace bnorm::eval
