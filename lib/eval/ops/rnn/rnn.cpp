// RNN, GRU and LSTM (every version, 1 to 22): the registration and what the
// three share (rnn_common.h). The cells are in cells.cpp (RNN,
// GRU) and lstm.cpp (LSTM).
//
// Contract shared by the three ops:
//   X [seq, batch, input] (layout 1, from version 14: [batch, seq, input]);
//   W [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden],
//   B [dirs, 2*gates*hidden] (Wb then Rb, zeros when absent);
//   sequence_lens [batch] int32 (int64 accepted), each in [0, seq];
//   initial states [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
//   direction forward, reverse or bidirectional (dirs = 2, the second
//   direction reverse). A reverse pass walks each sequence's valid prefix
//   backwards; Y is zero past a sequence's length and the final states are
//   those after its last valid step (the initial state for length 0).
//
// Decisions where the spec is loose:
//   - Versions 1 (LSTM, GRU, RNN) and 3 (GRU) write `Ht-1*R` where version 7
//     writes `Ht-1*(R^T)`; R has the same shape in both, and the change is
//     read as a notation fix: R is transposed at every version.
//   - `output_sequence` (versions 1 and GRU-3) only says Y may be omitted: Y
//     is computed whenever the node names it.
//   - `activation_alpha`/`activation_beta` are consumed in the order of the
//     activations, each value by the next activation that takes one (alpha:
//     Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu; beta:
//     Affine, ScaledTanh, HardSigmoid), as onnxruntime does. Values left over
//     would mean the writer expected one value per activation: refused.
//     Missing values take the defaults of the ONNX operators (LeakyRelu 0.01,
//     ThresholdedRelu 1, HardSigmoid 0.2 and 0.5, Elu 1, Affine 1 and 0);
//     ScaledTanh has none, so it needs both given. onnxruntime uses 0 for
//     the missing values of Affine, ScaledTanh and ThresholdedRelu.
//   - Activation names match case-insensitively. A list of one direction's
//     activations serves both directions of a bidirectional node; a list of
//     two directions' on a one-direction node uses the first half (RNN's
//     schema default is ['Tanh', 'Tanh'] whatever the direction).
//   - ThresholdedRelu is x >= alpha ? x : 0, as these ops' text says.
//   - `clip` bounds the input of every activation (LSTM's h(Ct) included);
//     the states themselves are not clipped. It must be positive.
//   - `hidden_size` may be absent: R's last dim gives it.
// Numbers: everything is computed in float64 and rounded once to the output
// type (onnxruntime computes in float, ONNX's reference in the input type).
#include "eval/ops/rnn/rnn_common.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/rnn/ops.h"

namespace bnorm::eval {

namespace rnn {

double Activation::operator()(double x) const {
  if (std::isnan(x)) return x;
  switch (kind) {
    case Kind::relu: return x > 0 ? x : 0.0;
    case Kind::tanh: return std::tanh(x);
    case Kind::sigmoid: return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
    case Kind::affine: return alpha * x + beta;
    case Kind::leaky_relu: return x >= 0 ? x : alpha * x;
    case Kind::thresholded_relu: return x >= alpha ? x : 0.0;
    case Kind::scaled_tanh: return alpha * std::tanh(beta * x);
    case Kind::hard_sigmoid: {
      const double v = alpha * x + beta;
      return v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
    }
    case Kind::elu: return x >= 0 ? x : alpha * std::expm1(x);
    case Kind::softsign: return x / (1 + std::fabs(x));
    case Kind::softplus: return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

const Activation& Setup::act(int64_t d, size_t j) const {
  const size_t per_dir = acts.size() / static_cast<size_t>(dirs);
  return acts[static_cast<size_t>(d) * per_dir + j];
}

namespace {

using Kind = Activation::Kind;

struct ActInfo {
  const char* name;
  Kind kind;
  bool takes_alpha, takes_beta, has_defaults;
  double alpha, beta;
};

constexpr ActInfo kActs[] = {
    {"relu", Kind::relu, false, false, true, 0, 0},
    {"tanh", Kind::tanh, false, false, true, 0, 0},
    {"sigmoid", Kind::sigmoid, false, false, true, 0, 0},
    {"affine", Kind::affine, true, true, true, 1.0, 0.0},
    {"leakyrelu", Kind::leaky_relu, true, false, true, 0.01, 0},
    {"thresholdedrelu", Kind::thresholded_relu, true, false, true, 1.0, 0},
    {"scaledtanh", Kind::scaled_tanh, true, true, false, 0, 0},
    {"hardsigmoid", Kind::hard_sigmoid, true, true, true, 0.2, 0.5},
    {"elu", Kind::elu, true, false, true, 1.0, 0},
    {"softsign", Kind::softsign, false, false, true, 0, 0},
    {"softplus", Kind::softplus, false, false, true, 0, 0},
};

const ActInfo& act_info(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& a : kActs) {
    if (lower == a.name) return a;
  }
  fail(ErrorKind::input, "unknown activation '{}' (expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
       "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)", name);
}

// Takes the next value of `values` for an activation that uses one.
double take(const std::vector<float>& values, size_t& next, bool has_default, double fallback, const ActInfo& a,
            const char* attr) {
  if (next < values.size()) return values[next++];
  if (!has_default) fail(ErrorKind::input, "activation {} has no default {}: '{}' must give it", a.name, attr, attr);
  return fallback;
}

std::vector<Activation> read_activations(const onnx::NodeProto& node, const OpSpec& op, int64_t dirs) {
  std::vector<std::string> names(op.default_activations.begin(), op.default_activations.end());
  // An empty list names nothing, so it keeps the defaults; very old models
  // leave the attribute's type unset.
  if (const auto* a = find_attr(node, "activations")) {
    if (a->type() != onnx::AttributeProto::STRINGS && a->type() != onnx::AttributeProto::UNDEFINED) {
      fail(ErrorKind::input, "attribute 'activations' must be strings");
    }
    if (a->strings_size() > 0) names.assign(a->strings().begin(), a->strings().end());
  }
  const size_t k = op.default_activations.size();
  if (names.size() != k && names.size() != 2 * k) {
    fail(ErrorKind::input, "{} takes {} activations per direction, 'activations' has {}", op.name, k, names.size());
  }
  const auto alphas = attr_floats(node, "activation_alpha").value_or(std::vector<float>{});
  const auto betas = attr_floats(node, "activation_beta").value_or(std::vector<float>{});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const auto& name : names) {
    const ActInfo& info = act_info(name);
    Activation act{info.kind, info.alpha, info.beta};
    if (info.takes_alpha) act.alpha = take(alphas, next_alpha, info.has_defaults, info.alpha, info, "activation_alpha");
    if (info.takes_beta) act.beta = take(betas, next_beta, info.has_defaults, info.beta, info, "activation_beta");
    acts.push_back(act);
  }
  if (next_alpha != alphas.size() || next_beta != betas.size()) {
    fail(ErrorKind::unsupported, "activation_alpha/activation_beta hold {}/{} values, the activations take {}/{}: "
         "values meant one per activation are not supported", alphas.size(), betas.size(), next_alpha, next_beta);
  }
  if (dirs == 2 && acts.size() == k) acts.insert(acts.end(), acts.begin(), acts.end());
  acts.resize(k * static_cast<size_t>(dirs));
  return acts;
}

void check_type(const OpContext& ctx, const OpSpec& op, const Tensor& t, DType want, const char* what) {
  if (t.dtype != want) {
    fail(ErrorKind::input, "input '{}' is {}, X is {}", what, dtype_name(t.dtype), dtype_name(want));
  }
  const bool ok = t.dtype == DType::float32 || t.dtype == DType::float64 || t.dtype == DType::float16 ||
                  (t.dtype == DType::bfloat16 && ctx.version >= 22);
  if (!ok) fail(ErrorKind::input, "{}-{} does not take {} of type {}", op.name, ctx.version, what, dtype_name(t.dtype));
}

void check_shape(const Tensor& t, const std::vector<int64_t>& want, const char* what) {
  if (t.dims != want) fail(ErrorKind::input, "input '{}' has shape {}, expected {}", what, shape_str(t.dims), shape_str(want));
}

void read_direction_and_layout(const OpContext& ctx, const OpSpec& op, Setup& s) {
  const std::string dir = attr_string(*ctx.node, "direction", "forward");
  if (dir == "bidirectional") {
    s.dirs = 2;
  } else if (dir == "reverse") {
    s.reverse_only = true;
  } else if (dir != "forward") {
    fail(ErrorKind::input, "direction '{}' is not forward, reverse or bidirectional", dir);
  }
  const int64_t layout = attr_int(*ctx.node, "layout", 0);
  if (layout != 0 && layout != 1) fail(ErrorKind::input, "layout must be 0 or 1, is {}", layout);
  if (layout == 1 && ctx.version < 14) fail(ErrorKind::input, "{}-{} has no attribute 'layout' (from 14)", op.name, ctx.version);
  s.batch_first = layout == 1;
}

void read_sizes(const OpContext& ctx, const Tensor& x, const Tensor& r, Setup& s) {
  if (x.dims.size() != 3) fail(ErrorKind::input, "input 'X' must have rank 3, has shape {}", shape_str(x.dims));
  if (r.dims.size() != 3) fail(ErrorKind::input, "input 'R' must have rank 3, has shape {}", shape_str(r.dims));
  s.seq = x.dims[s.batch_first ? 1 : 0];
  s.batch = x.dims[s.batch_first ? 0 : 1];
  s.input = x.dims[2];
  s.hidden = r.dims[2];
  if (find_attr(*ctx.node, "hidden_size")) {
    const int64_t h = attr_int(*ctx.node, "hidden_size", 0);
    if (h <= 0) fail(ErrorKind::input, "hidden_size must be positive, is {}", h);
    if (h != s.hidden) fail(ErrorKind::input, "hidden_size is {}, R has shape {}", h, shape_str(r.dims));
  }
  if (s.hidden > (int64_t{1} << 40)) fail(ErrorKind::input, "hidden size {} is too large", s.hidden);
}

std::vector<int64_t> read_lens(const OpContext& ctx, const Setup& s) {
  const Tensor* t = ctx.input(4);
  if (!t) return std::vector<int64_t>(static_cast<size_t>(s.batch), s.seq);
  check_shape(*t, {s.batch}, "sequence_lens");
  auto lens = read_ints(*t, "sequence_lens");
  for (int64_t n : lens) {
    if (n < 0 || n > s.seq) fail(ErrorKind::input, "sequence_lens holds {}, outside [0, {}]", n, s.seq);
  }
  return lens;
}

// v read as [a][b][n] and written as [b][a][n]: every move between
// layout 1 (batch first) and the [seq or dirs][batch] order computed in.
std::vector<double> swap_leading(const std::vector<double>& v, int64_t a, int64_t b, int64_t n) {
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) std::copy_n(v.data() + ((i * b + j) * n), n, out.data() + ((j * a + i) * n));
  }
  return out;
}

// X in [seq][batch][input] order whatever the layout.
std::vector<double> read_x(const Tensor& x, const Setup& s) {
  std::vector<double> v = x.to_f64();
  if (!s.batch_first) return v;
  return swap_leading(v, s.batch, s.seq, s.input);
}

}  // namespace

Setup read_setup(const OpContext& ctx, const OpSpec& op) {
  if (ctx.input_count() > static_cast<size_t>(op.max_inputs)) {
    fail(ErrorKind::input, "{} takes at most {} inputs, the node has {}", op.name, op.max_inputs, ctx.input_count());
  }
  if (ctx.output_count() > op.max_outputs) {
    fail(ErrorKind::input, "{} has at most {} outputs, the node has {}", op.name, op.max_outputs, ctx.output_count());
  }
  const Tensor& x = ctx.required(0, "X");
  const Tensor& w = ctx.required(1, "W");
  const Tensor& r = ctx.required(2, "R");
  const Tensor* b = ctx.input(3);
  Setup s;
  s.dtype = x.dtype;
  s.gates = op.gates;
  check_type(ctx, op, x, x.dtype, "X");
  check_type(ctx, op, w, x.dtype, "W");
  check_type(ctx, op, r, x.dtype, "R");
  if (b) check_type(ctx, op, *b, x.dtype, "B");
  read_direction_and_layout(ctx, op, s);
  read_sizes(ctx, x, r, s);
  const int64_t rows = s.gates * s.hidden;
  check_shape(w, {s.dirs, rows, s.input}, "W");
  check_shape(r, {s.dirs, rows, s.hidden}, "R");
  if (b) check_shape(*b, {s.dirs, 2 * rows}, "B");
  if (find_attr(*ctx.node, "clip")) {
    const double c = attr_float(*ctx.node, "clip", 0.0F);
    if (!(c > 0)) fail(ErrorKind::input, "clip must be positive, is {}", c);
    s.clip = c;
  }
  s.acts = read_activations(*ctx.node, op, s.dirs);
  s.lens = read_lens(ctx, s);
  s.x = read_x(x, s);
  s.w = w.to_f64();
  s.r = r.to_f64();
  s.b = b ? b->to_f64() : std::vector<double>(static_cast<size_t>(checked_buffer_numel({s.dirs, 2 * rows}, sizeof(double), "B")));
  return s;
}

std::vector<double> read_state(const OpContext& ctx, const Setup& s, size_t index, const char* what) {
  const std::vector<int64_t> dims = s.batch_first ? std::vector<int64_t>{s.batch, s.dirs, s.hidden}
                                                  : std::vector<int64_t>{s.dirs, s.batch, s.hidden};
  const Tensor* t = ctx.input(index);
  if (!t) return std::vector<double>(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), what)));
  if (t->dtype != s.dtype) fail(ErrorKind::input, "input '{}' is {}, X is {}", what, dtype_name(t->dtype), dtype_name(s.dtype));
  check_shape(*t, dims, what);
  std::vector<double> v = t->to_f64();
  if (!s.batch_first) return v;
  return swap_leading(v, s.batch, s.dirs, s.hidden);
}

void input_part(const Setup& s, int64_t d, int64_t bi, int64_t t, double* out) {
  const int64_t rows = s.gates * s.hidden;
  const double* xt = s.x.data() + (t * s.batch + bi) * s.input;
  const double* wd = s.w.data() + d * rows * s.input;
  const double* wb = s.b.data() + d * 2 * rows;
  for (int64_t row = 0; row < rows; ++row) {
    double acc = 0;
    for (int64_t k = 0; k < s.input; ++k) acc += wd[row * s.input + k] * xt[k];
    out[row] = acc + wb[row];
  }
}

void recurrent_part(const Setup& s, int64_t d, const double* h, int64_t first, double* out) {
  const int64_t rows = s.gates * s.hidden;
  const double* rd = s.r.data() + d * rows * s.hidden;
  const double* rb = s.b.data() + d * 2 * rows + rows;
  for (int64_t row = first; row < first + s.hidden; ++row) {
    double acc = 0;
    for (int64_t k = 0; k < s.hidden; ++k) acc += rd[row * s.hidden + k] * h[k];
    out[row - first] = acc + rb[row];
  }
}

std::vector<double> y_buffer(const Setup& s) {
  return std::vector<double>(static_cast<size_t>(checked_buffer_numel({s.seq, s.dirs, s.batch, s.hidden}, sizeof(double), "Y")));
}

Tensor y_tensor(const Setup& s, const std::vector<double>& y) {
  if (!s.batch_first) return Tensor::from_f64(s.dtype, {s.seq, s.dirs, s.batch, s.hidden}, y);
  return Tensor::from_f64(s.dtype, {s.batch, s.seq, s.dirs, s.hidden}, swap_leading(y, s.seq * s.dirs, s.batch, s.hidden));
}

Tensor state_tensor(const Setup& s, const std::vector<double>& state) {
  if (!s.batch_first) return Tensor::from_f64(s.dtype, {s.dirs, s.batch, s.hidden}, state);
  return Tensor::from_f64(s.dtype, {s.batch, s.dirs, s.hidden}, swap_leading(state, s.dirs, s.batch, s.hidden));
}

Tensors finish(const OpContext& ctx, const Setup& s, const std::vector<double>& y, const std::vector<double>& h,
               const std::vector<double>* c) {
  Tensors out(static_cast<size_t>(std::max(1, ctx.output_count())));
  if (ctx.wants(0)) out[0] = y_tensor(s, y);
  if (ctx.wants(1)) out[1] = state_tensor(s, h);
  if (c && ctx.wants(2)) out[2] = state_tensor(s, *c);
  return out;
}

}  // namespace rnn

}  // namespace bnorm::eval
