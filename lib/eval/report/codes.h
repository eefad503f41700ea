// Quantized values compared as codes (bnorm eval --compare, issue 25):
// where both models produce the integer codes of a quantizer
// (QuantizeLinear or DynamicQuantizeLinear output 0), how many codes
// differ and by how many steps, and whether each flip is rounding: a one-
// step flip is rounding when B's float input is itself within the compare's
// criterion and A's and B's float inputs, in code units
// (x / scale + zero point), lie on either side of the rounding boundary
// between the two codes (B's float input differs from A's, as rounding
// may make it, and the quantizer rounds the two apart).
#pragma once

#include <cstdint>
#include <string>

#include "model/tensor.h"

namespace bnorm {

struct CodeDiff {
  int64_t elements = 0;
  int64_t differ = 0;      // codes that differ
  int64_t max_steps = 0;   // largest |code_B - code_A|
  int64_t straddling = 0;  // one-step flips whose float inputs straddle the boundary
  bool analysed = false;   // the float inputs and scales were known, so straddling means something
  bool inputs_inside = true;  // B's float input is itself inside the compare's criterion
  // The first differing code: its element, the codes, and A's and B's
  // float inputs in code units (NaN when not analysed).
  int64_t first = -1;
  int64_t code_a = 0, code_b = 0;
  double position_a = 0, position_b = 0;
  // Every differing code is a one-step flip the float inputs explain.
  bool rounding() const { return differ > 0 && analysed && inputs_inside && straddling == differ; }
  void merge(const CodeDiff& o);
};

// How a quantizer maps floats to codes.
struct QuantParams {
  bool dynamic = false;        // DynamicQuantizeLinear: scale and zero point from x itself
  const Tensor* scale = nullptr;  // QuantizeLinear: scalar or per axis (1-D)
  const Tensor* zero_point = nullptr;
  int64_t axis = 1;
};

// Codes `a` and `b` of one quantizer compared; x_a and x_b its float inputs
// in A and B (nullptr when unknown: no analysis).
CodeDiff code_diff(const Tensor& a, const Tensor& b, const Tensor* x_a, const Tensor* x_b, const QuantParams& q);

// "3 of 1024 codes differ, all by one step where A's and B's float inputs straddle a rounding boundary (first:
// element 17, 41 in A, 42 in B, inputs at 41.4999999 and 41.5000002 code units)".
std::string code_text(const CodeDiff& c);

}  // namespace bnorm
