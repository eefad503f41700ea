// CausalConvWithState-27 below opset 27: its function body, a depthwise
// Conv over the state and the input side by side.
//
//   Before: Y, present_state? = CausalConvWithState(X (B, C, L), W (C, 1, k), bias?, past_state?)  activation
//   After:  P = Concat(past_state, X, axis 2)                 (no past_state: Pad(X, k - 1 zeros in front))
//           Y = Conv(P, W, bias?) group C, kernel [k], no padding, stride 1
//           Y = Mul(Y, Sigmoid(Y))                            activation 'silu' or 'swish'
//           present_state = Slice(P, [-(k - 1)], [max], [2])  (k = 1: empty)
//
// Formula: CausalConvWithState-27's (Changelog.md): output position t reads
// P[t .. t + k - 1], the k - 1 values before X's position t and X[t].
// bnorm's evaluator computes the op in float64 and rounds once; Conv and
// the SiLU round after each node, so the lowered model agrees within float
// rounding (`--verify` judges it), as ONNX's own expanded form does.
// Preconditions (each an Error naming the node): W's first and last dims
// (C and k) known; activation 'none', 'silu' or 'swish'; a target of
// opset 11 or later (Pad with its pads as an input), and for bfloat16 22
// (Conv's bfloat16).
#include <fmt/format.h>

#include <limits>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_causalconv_27(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  require_op(s, "Pad with its pads as an input", 11);
  const std::string act = attr_string(n, "activation", "none");
  if (act != "none" && act != "silu" && act != "swish") refuse(s, fmt::format("activation '{}' is not none, silu or swish", act));
  const DType t = known_type(s, n.input(0), "input X");
  if (t == DType::bfloat16) require_op(s, "Conv (bfloat16)", 22);
  const auto w = s.dims_of(n.input(1));
  if (!w || w->size() != 3 || (*w)[0] < 0 || (*w)[2] < 1) {
    refuse(s, fmt::format("the shape of weight '{}' (channels, 1, k) is not known", n.input(1)));
  }
  const int64_t channels = (*w)[0], k = (*w)[2];
  const std::string past = input_at(n, 3), bias = input_at(n, 2);

  Lowering l{s, opset};
  std::string padded;
  if (!past.empty()) {
    padded = l.value("padded");
    set_int(s.add_before("Concat", {past, n.input(0)}, {padded}), "axis", 2);
  } else {
    padded = l.add("Pad", {n.input(0), s.add_int64s(s.stem() + "_pads", {0, 0, k - 1, 0, 0, 0}), l.scalar(t, 0, "zero")},
                   "padded");
  }
  std::vector<std::string> conv_in{padded, n.input(1)};
  if (!bias.empty()) conv_in.push_back(bias);
  const bool silu = act != "none";
  const std::string conv_out = silu ? l.value("conv") : n.output(0);
  onnx::NodeProto& conv = s.add_before("Conv", conv_in, {conv_out});
  set_int(conv, "group", channels);
  set_ints(conv, "kernel_shape", {k});
  if (silu) l.add("Mul", {conv_out, l.add("Sigmoid", {conv_out}, "sigmoid")}, "y", n.output(0));
  if (!output_at(n, 1).empty()) {
    const int64_t start = k > 1 ? -(k - 1) : std::numeric_limits<int64_t>::max();
    s.add_before("Slice", {padded, s.add_int64s(s.stem() + "_state_starts", {start}),
                           s.add_int64s(s.stem() + "_state_ends", {std::numeric_limits<int64_t>::max()}),
                           s.add_int64s(s.stem() + "_state_axes", {2})},
                 {n.output(1)});
  }
}

}  // namespace bnorm::steps
