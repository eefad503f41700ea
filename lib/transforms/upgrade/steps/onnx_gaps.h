// bnorm's steps up to opset 17 where ONNX 1.12's converter has no adapter
// or a wrong one (docs/upgrade.md): each moves its node from the site's
// version to the one of the target opset in one step, refusing (Error
// naming the node) before any rewrite what cannot be converted.
#pragma once

#include <string>

#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

// Error(unsupported) naming the node, the value and the type when an element
// type of the node does not exist at schema version `version` (target_types.cpp).
void refuse_missing_types(const NormSite& s, int version);

// Negative axes/indices below 11, ReduceSum 13 -> 12, ArgMax/ArgMin 12 -> 11
// (axis_11.cpp). axis_11_normalize only rewrites the axis attributes (for a
// node another step already moved, e.g. Split).
void axis_11_convert(NormSite& s);
void axis_11_normalize(NormSite& s);
// Equal, Greater, Less, And, Or, Xor across 7 (compare_7.cpp).
void compare_7_convert(NormSite& s);
// Whether every input of the node surely has the same shape (equal sizes,
// or the same symbolic names; compare_7.cpp).
bool inputs_same_shape(const NormSite& s);
// Max, Min, Mean, Sum across 8 (variadic_8.cpp).
void variadic_8_convert(NormSite& s);
// Reshape across 5 (reshape_5.cpp).
void reshape_5_convert(NormSite& s);
// Split 1 -> 2+: a constant `split` input becomes the attribute (split_1_2.cpp).
void split_1_2_up(NormSite& s);
// LpPool, GlobalLpPool across 2: `p` float <-> int (lppool_2.cpp).
void lppool_2_convert(NormSite& s);
// Tile 1 -> 6 (tiles, axis -> repeats); down refused (tile_6.cpp).
void tile_6_convert(NormSite& s);
// RNN, GRU, LSTM across 7, GRU across 3, down across 14 (rnn_7.cpp).
void rnn_convert(NormSite& s);
// RoiAlign 16 -> 10 (roialign_16.cpp).
void roialign_convert(NormSite& s);
// QuantizeLinear, DequantizeLinear 13 -> 10 (quantize_linear.cpp).
void quantize_linear_convert(NormSite& s);

}  // namespace bnorm::steps
