#include "transforms/upgrade/versions.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

namespace bnorm {

namespace {

constexpr auto T = VersionKind::types;
constexpr auto A = VersionKind::attrs;
constexpr auto V = VersionKind::value;
constexpr auto S = VersionKind::step;
constexpr auto O = VersionKind::onnx;
constexpr auto R = VersionKind::refused;

}  // namespace

const std::vector<OpChanges>& version_changes() {
  static const std::vector<OpChanges> table{
      {"Abs", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"Acos", {{22, T}}},
      {"Acosh", {{22, T}}},
      {"Add", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {7, S, "", &steps::compare_7}, {13, T}, {14, T}}},
      {"And", {{7, S, "", &steps::compare_7}}},
      {"ArgMax", {{11, S, "", &steps::axis_11}, {12, O}, {13, T}}},
      {"ArgMin", {{11, S, "", &steps::axis_11}, {12, O}, {13, T}}},
      {"Asin", {{22, T}}},
      {"Asinh", {{22, T}}},
      {"Atan", {{22, T}}},
      {"Atanh", {{22, T}}},
      {"Attention", {{24, S, "", &steps::attention_24}, {25, S, "", &steps::attention_25}}},
      {"AveragePool", {{7, O}, {10, A, "ceil_mode=0"}, {11, O}, {19, A, "dilations=1s"}, {22, T}}},
      {"BatchNormalization", {{6, S, "", &steps::bn_1_6}, {7, S, "", &steps::bn_6_7}, {9, S, "", &steps::bn_7_9},
          {14, S, "", &steps::bn_9_14}, {15, S, "", &steps::bn_14_15}}},
      {"Bernoulli", {{22, T}}},
      {"Cast", {{6, S, "", &steps::cast_1_6}, {9, T}, {13, T}, {19, A, "saturate=*"}, {21, T}, {23, T}, {24, A, "round_mode=*"}, {25, T}}},
      {"CastLike", {{19, A, "saturate=*"}, {21, T}, {23, T}, {24, A, "round_mode=*"}, {25, T}}},
      {"Ceil", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"Celu", {{28, S, "", &steps::celu_28}}},
      {"Clip", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {11, S, "", &steps::clip_11}, {12, T}, {13, T}}},
      {"Compress", {{11, S, "", &steps::axis_11}}},
      {"Concat", {{4, S, "", &steps::concat_4}, {11, S, "", &steps::axis_11}, {13, T}}},
      {"Constant", {{9, T, "", &steps::constant_9}, {11, T}, {12, T}, {13, T}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"ConstantOfShape", {{20, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Conv", {{11, O}, {22, T}}},
      {"ConvTranspose", {{11, O}, {22, T}}},
      {"Cos", {{22, T}}},
      {"Cosh", {{22, T}}},
      {"CumSum", {{14, T}}},
      {"DFT", {{20, S, "", &steps::dft_20}}},
      {"DeformConv", {{22, T}}},
      {"DepthToSpace", {{11, A, "mode=DCR"}, {13, T}}},
      {"DequantizeLinear", {{13, S, "", &steps::quantize_linear}, {19, T}, {21, A, "block_size=0"}, {23, A, "output_dtype=0"}, {24, T}, {25, T}}},
      {"Det", {{22, T}}},
      {"Div", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {7, S, "", &steps::compare_7}, {13, T}, {14, T}}},
      {"Dropout", {{6, S, "", &steps::dropout}, {7, S, "", &steps::dropout}, {10, S, "", &steps::dropout}, {12, S, "", &steps::dropout}, {13, T}, {22, T}}},
      {"Elu", {{6, T, "consumed_inputs removed (optional at 1)"}, {22, T}}},
      {"Equal", {{7, S, "", &steps::compare_7}, {11, T}, {13, T}, {19, T}}},
      {"Erf", {{13, T, "integer types removed, bfloat16 added: a float Erf-13 is an Erf-9"}}},
      {"Exp", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"Expand", {{13, T}}},
      {"EyeLike", {{22, T}}},
      {"Flatten", {{9, T}, {11, T}, {13, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Floor", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"GRU", {{3, S, "", &steps::rnn_7}, {7, S, "", &steps::rnn_7}, {14, O}, {22, T}}},
      {"Gather", {{11, S, "", &steps::axis_11}, {13, T}}},
      {"GatherElements", {{13, T}}},
      {"GatherND", {{12, A, "batch_dims=0"}, {13, T}}},
      {"Gemm", {{6, O}, {7, T}, {9, T}, {11, T}, {13, T}}},
      {"GlobalAveragePool", {{22, T}}},
      {"GlobalLpPool", {{2, S, "", &steps::lppool_2}, {22, T}}},
      {"GlobalMaxPool", {{22, T}}},
      {"Greater", {{7, S, "", &steps::compare_7}, {9, T}, {13, T}}},
      {"GreaterOrEqual", {{16, T}}},
      {"GridSample", {{20, S, "", &steps::gridsample_20}, {22, T}}},
      {"GroupNormalization", {{21, S, "", &steps::groupnorm_21}}},
      {"HardSigmoid", {{6, T, "consumed_inputs removed (optional at 1)"}, {22, T}}},
      {"HardSwish", {{22, T}}},
      {"Hardmax", {{11, S, "", &steps::axis_11}, {13, S, "", &steps::softmax_12_13}}},
      {"Identity", {{13, T}, {14, T}, {16, T}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"If", {{11, T}, {13, T}, {16, T}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"InstanceNormalization", {{6, S, "", &steps::in_1_6}, {22, T}}},
      {"IsInf", {{20, T}}},
      {"IsNaN", {{13, T}, {20, T}}},
      {"LRN", {{13, T}}},
      {"LSTM", {{7, S, "", &steps::rnn_7}, {14, O}, {22, T}}},
      {"LeakyRelu", {{6, T, "consumed_inputs removed (optional at 1)"}, {16, T}}},
      {"Less", {{7, S, "", &steps::compare_7}, {9, T}, {13, T}}},
      {"LessOrEqual", {{16, T}}},
      {"Log", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"LogSoftmax", {{11, S, "", &steps::axis_11}, {13, S, "", &steps::softmax_12_13}}},
      {"Loop", {{11, T, "loop-carried values optional from 11: kept when it has one", &steps::loop_11}, {13, T}, {16, T}, {19, T}, {21, T}, {23, T},
          {24, T}, {25, T}}},
      {"LpNormalization", {{22, T}}},
      {"LpPool", {{2, S, "", &steps::lppool_2}, {11, T}, {18, A, "ceil_mode=0,dilations=1s"}, {22, T}}},
      {"MatMul", {{9, T}, {13, T}}},
      {"Max", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {8, S, "", &steps::variadic_8}, {12, T}, {13, T}}},
      {"MaxPool", {{8, O}, {10, A, "ceil_mode=0,dilations=1s"}, {11, O}, {12, T}, {22, T}}},
      {"MaxRoiPool", {{22, T}}},
      {"MaxUnpool", {{11, T}, {22, T}}},
      {"Mean", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {8, S, "", &steps::variadic_8}, {13, T}}},
      {"MeanVarianceNormalization", {{9, O}, {13, T}}},
      {"Min", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {8, S, "", &steps::variadic_8}, {12, T}, {13, T}}},
      {"Mish", {{22, T}}},
      {"Mod", {{13, T}}},
      {"Mul", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {7, S, "", &steps::compare_7}, {13, T}, {14, T}}},
      {"Multinomial", {{22, T}}},
      {"Neg", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"NegativeLogLikelihoodLoss", {{13, T}, {22, T}}},
      {"NonMaxSuppression", {{11, T}}},
      {"NonZero", {{13, T}}},
      {"OneHot", {{11, S, "", &steps::axis_11}}},
      {"OptionalGetElement", {{18, T}}},
      {"OptionalHasElement", {{18, S, "", &steps::optional_has_element_18}}},
      {"Or", {{7, S, "", &steps::compare_7}}},
      {"PRelu", {{6, T, "consumed_inputs removed (optional at 1)"}, {7, O}, {9, T}, {16, T}}},
      {"Pad", {{2, S, "", &steps::pad_2_11}, {11, S, "", &steps::pad_2_11}, {13, T}, {18, S, "", &steps::pad_18}, {19, V, "mode=wrap"}, {21, T},
          {23, T}, {24, T}, {25, T}}},
      {"Pow", {{7, S, "", &steps::compare_7}, {12, T}, {13, T}, {15, T}}},
      {"QLinearMatMul", {{21, T}}},
      {"QuantizeLinear", {{13, S, "", &steps::quantize_linear}, {19, A, "saturate=*"}, {21, A, "block_size=0,output_dtype=0"},
          {23, A, "precision=0"}, {24, T}, {25, T}}},
      {"RNN", {{7, S, "", &steps::rnn_7}, {14, O}, {22, T}}},
      {"RandomNormal", {{22, T}}},
      {"RandomNormalLike", {{22, T}}},
      {"RandomUniform", {{22, T}}},
      {"RandomUniformLike", {{22, T}}},
      {"Range", {{27, A, "stash_type=*"}}},
      {"Reciprocal", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"ReduceL1", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"ReduceL2", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"ReduceLogSum", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"ReduceLogSumExp", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"ReduceMax", {{11, S, "", &steps::axis_11}, {12, T}, {13, T}, {18, S, "", &steps::reduce_axes_18}, {20, T}}},
      {"ReduceMean", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"ReduceMin", {{11, S, "", &steps::axis_11}, {12, T}, {13, T}, {18, S, "", &steps::reduce_axes_18}, {20, T}}},
      {"ReduceProd", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"ReduceSum", {{11, S, "", &steps::axis_11}, {13, S, "", &steps::axis_11}}},
      {"ReduceSumSquare", {{11, S, "", &steps::axis_11}, {13, T}, {18, S, "", &steps::reduce_axes_18}}},
      {"Relu", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}, {14, T}}},
      {"Reshape", {{5, S, "", &steps::reshape_5}, {13, T}, {14, S, "", &steps::reshape_14}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Resize", {{11, S, "", &steps::resize_10}, {13, S, "", &steps::resize_10}, {18, S, "", &steps::resize_18},
          {19, S, "", &steps::resize_19}}},
      {"RoiAlign", {{16, S, "", &steps::roialign_16}, {22, T}}},
      {"Round", {{22, T}}},
      {"Scan", {{9, S, "", &steps::scan_8_9}, {11, S, "", &steps::axis_11}, {16, T}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Scatter", {{11, O}}},
      {"ScatterElements", {{13, T, "", &steps::scatter_elements_11}, {16, A, "reduction=none"}, {18, V, "reduction=max|min"}}},
      {"ScatterND", {{13, T}, {16, A, "reduction=none"}, {18, V, "reduction=max|min"}}},
      {"Selu", {{6, T, "consumed_inputs removed (optional at 1)"}, {22, T}}},
      {"Shape", {{13, T}, {15, A, "start=0,end="}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Sigmoid", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"Sign", {{13, T}}},
      {"Sin", {{22, T}}},
      {"Sinh", {{22, T}}},
      {"Size", {{13, T}, {19, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Slice", {{10, S, "", &steps::slice_10}, {11, S, "", &steps::slice_10}, {13, T}}},
      {"Softmax", {{11, S, "", &steps::axis_11}, {13, S, "", &steps::softmax_12_13}}},
      {"SoftmaxCrossEntropyLoss", {{13, T}}},
      {"Softplus", {{22, T}}},
      {"Softsign", {{22, T}}},
      {"SpaceToDepth", {{13, T}}},
      {"Split", {{2, S, "", &steps::split}, {11, S, "", &steps::split}, {13, S, "", &steps::split}, {18, S, "", &steps::split_18}}},
      {"SplitToSequence", {{24, T}}},
      {"Sqrt", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"Squeeze", {{11, S, "", &steps::squeeze_11}, {13, S, "", &steps::squeeze_11}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Sub", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {7, S, "", &steps::compare_7}, {13, T}, {14, T}}},
      {"Sum", {{6, T, "consumed_inputs removed (optional at 1)", &steps::consumed_inputs_6}, {8, S, "", &steps::variadic_8}, {13, T}}},
      {"Tan", {{22, T}}},
      {"Tanh", {{6, T, "consumed_inputs removed (optional at 1)"}, {13, T}}},
      {"ThresholdedRelu", {{10, O}, {22, T}}},
      {"Tile", {{6, S, "", &steps::tile_6}, {13, T}}},
      {"TopK", {{10, S, "", &steps::topk_10}, {11, S, "", &steps::topk_10}, {24, T}}},
      {"Transpose", {{13, T}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Unsqueeze", {{11, S, "", &steps::squeeze_11}, {13, S, "", &steps::squeeze_11}, {21, T}, {23, T}, {24, T}, {25, T}}},
      {"Upsample", {{7, S, "", &steps::upsample}, {9, S, "", &steps::upsample}, {10, S, "", &steps::upsample}}},
      {"Where", {{16, T}}},
      {"Xor", {{7, S, "", &steps::compare_7}}},
  };
  return table;
}

namespace {

const OpChanges* op_changes(std::string_view op) {
  const auto& t = version_changes();
  const auto it = std::lower_bound(t.begin(), t.end(), op, [](const OpChanges& c, std::string_view o) { return c.op < o; });
  return it == t.end() || it->op != op ? nullptr : &*it;
}

}  // namespace

const VersionChange* version_change(std::string_view op, int version) {
  const OpChanges* row = op_changes(op);
  if (!row) return nullptr;
  for (const auto& c : row->changes) {
    if (c.version == version) return &c;
  }
  return nullptr;
}

std::vector<const VersionChange*> rows_crossed(std::string_view op, int64_t from, int64_t to) {
  std::vector<const VersionChange*> out;
  const OpChanges* row = op_changes(op);
  if (!row) return out;
  for (const auto& c : row->changes) {
    if (std::min(from, to) < c.version && c.version <= std::max(from, to)) out.push_back(&c);
  }
  if (to < from) std::reverse(out.begin(), out.end());
  return out;
}

std::vector<const Step*> table_steps() {
  std::vector<const Step*> out;
  for (const auto& row : version_changes()) {
    for (const auto& c : row.changes) {
      if (c.step && std::find(out.begin(), out.end(), c.step) == out.end()) out.push_back(c.step);
    }
  }
  return out;
}

bool crosses_step(const Step& step, std::string_view op, int64_t from, int64_t to) {
  for (const VersionChange* c : rows_crossed(op, from, to)) {
    if (c->step == &step) return true;
  }
  return false;
}

bool step_applies(const Step& step, const onnx::NodeProto& n, int64_t from, int64_t to) {
  return step.applies ? step.applies(n, from, to) : crosses_step(step, n.op_type(), from, to);
}

std::vector<int> type_only_versions_upto_17(std::string_view op) {
  std::vector<int> out;
  const OpChanges* row = op_changes(op);
  if (!row) return out;
  for (const auto& c : row->changes) {
    if ((c.kind == VersionKind::types || c.kind == VersionKind::attrs) && c.version <= 17) out.push_back(c.version);
  }
  return out;
}

const char* version_kind_name(VersionKind k) {
  switch (k) {
    case VersionKind::types: return "type-only";
    case VersionKind::attrs: return "attributes added with defaults";
    case VersionKind::value: return "attribute value added";
    case VersionKind::step: return "bnorm step";
    case VersionKind::onnx: return "ONNX 1.12 adapter";
    case VersionKind::refused: return "refused";
  }
  return "";
}

}  // namespace bnorm
