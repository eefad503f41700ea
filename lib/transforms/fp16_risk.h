// float16 risks of the normalization nodes of a model: what converting it
// to float16 (or running its norms in float16) would break, per node
// (BatchNormalization, InstanceNormalization, LayerNormalization,
// GroupNormalization, RMSNormalization), each with the node's label and a
// sentence on what to do. For `bnorm inspect --fp16`.
//
// Checks (float16: largest finite 65504, smallest normal 2^-14 ~ 6.1e-5,
// smallest subnormal 2^-24 ~ 6.0e-8; rounding to nearest, ties to even):
//   overflow        a constant parameter (scale, bias, mean, variance) above
//                   65504 in magnitude: it changes in float16, and from
//                   65520 on it becomes inf;
//   epsilon_zero    epsilon > 0 that rounds to 0 in float16 (< 2^-25);
//   epsilon_tiny    epsilon below the subnormal range (< 2^-24) that does
//                   not round to 0: float16 holds it as 2^-24, not itself;
//   subnormal_scale scale values that are float16 subnormals (0 < |s| < 2^-14),
//                   which lose precision, round to 0 below 2^-25, and are
//                   flushed to 0 by hardware that flushes subnormals;
//   sum_of_squares  (inputs given) a LayerNormalization, GroupNormalization or
//                   RMSNormalization input whose measured sum of x^2 over one
//                   normalized group exceeds 65504: a float16 accumulation
//                   of the variance (or mean square) overflows to inf.
// An epsilon that is a float16 subnormal but not below 2^-24 (the default
// 1e-5 is one) is not reported: every float16 model has it, and it holds.
// Only constant parameters are read; NaN values are not float16 risks.
// The inputs check needs the norm's input in the main graph (the evaluator
// fetches main-graph values only); norms in subgraphs get parameter checks.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/tensor.h"

namespace bnorm {

struct Fp16Risk {
  std::string graph;   // "main", or the subgraph's path
  std::string node;    // the node's label (model/node_label.h)
  std::string op;      // "BatchNormalization", ...
  int node_index = -1;
  std::string check;   // overflow, epsilon_zero, epsilon_tiny, subnormal_scale, sum_of_squares
  std::string input;   // the input or attribute concerned: "input_var", "scale", "epsilon", "X"
  std::string what;    // what happens in float16, with the numbers
  std::string advice;  // what to do
};

// `inputs` (graph input name -> tensor), when given, runs the model in the
// evaluator to measure the norms' inputs; evaluation errors propagate.
std::vector<Fp16Risk> fp16_risks(const Model& model, const std::map<std::string, Tensor>* inputs = nullptr);

}  // namespace bnorm
