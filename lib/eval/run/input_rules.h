// The values a random integer graph input may take where a node of the main
// graph that reads it defines them (random_inputs.h; docs/semantics.md,
// "Random inputs"):
//   Gather, GatherElements (indices)     [-s, s-1], s = data.shape[axis]
//   GatherND (indices)                   coordinate j of the last axis in
//                                        [-s_j, s_j-1], s_j = data.shape[batch_dims + j]
//   Scatter, ScatterElements (indices)   as GatherElements ([0, s-1] at Scatter-9);
//   ScatterND (indices)                  as GatherND; with reduction "none",
//                                        positions drawn without duplicates
//   RoiAlign (batch_indices)             [0, N-1], N = X.shape[0]
//   TopK (K, from version 10)            [1, X.shape[axis]]
//   OneHot (indices, constant depth)     [-depth, depth-1] ([0, depth-1] at 9)
//   Reshape (shape)                      the data's shape (a last -1, or 1s, for
//                                        another length)
//   Expand (shape) 1; Tile (repeats) [1, 2]; ConstantOfShape (input) [1, 4];
//   Range (delta) [1, 3]
// A dim these need comes from the data's shape: a graph input's (given, or
// as drawn), an initializer's or constant's, else ONNX's shape inference
// with the inputs' sizes; unknown: Error(usage) naming the input and the
// options that give it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/model.h"

namespace bnorm {

struct IndexRange {
  int64_t lo = 0, hi = -1;  // inclusive; empty when lo > hi
};

struct InputRule {
  // Element i (C order) takes a value in along_last[i % along_last.size()]:
  // one range for all, or one per position of the last axis (index tuples,
  // Reshape's shape).
  std::vector<IndexRange> along_last;
  // Positions without duplicates (Scatter, ScatterElements and ScatterND
  // with reduction "none", when no other node constrains the input): on
  // each line along `axis` (Scatter, ScatterElements), or over the tuples of
  // the last axis (ScatterND, axis -1); `sizes` the dims they address; a
  // position p may be written p - size when `negative`.
  bool distinct = false;
  int64_t axis = -1;
  std::vector<int64_t> sizes;
  bool negative = false;
  std::string why;  // "indices of Gather 'g' (axis 0 of 'data', size 5)"; several joined by "; "
};

// The rule of every integer graph input in `drawn` (name -> the shape it is
// drawn with) that a main-graph node constrains; `shapes` holds the shape
// of every graph input (given or drawn), `dims` the symbolic dims' sizes.
// Two consumers: their ranges intersected (Error(usage) naming both when
// nothing is left).
std::map<std::string, InputRule> input_rules(const Model& model, const std::map<std::string, std::vector<int64_t>>& drawn,
                                             const std::map<std::string, std::vector<int64_t>>& shapes,
                                             const std::map<std::string, Tensor>& given);

}  // namespace bnorm
