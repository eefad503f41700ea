// Telling rounding from error (bnorm eval A --compare B, --tolerance auto;
// docs/semantics.md "Judging B against A's own rounding").
//
// A64 is A evaluated in float64 (eval/run/float64.h). Per output, over its
// finite elements:
//   e_A = |A - A64|   what A's own rounding does there
//   e_B = |B - A64|   how far B is from the same exact reference
// For each p in {0.5, 0.9, 0.99, 1} (nearest-rank quantiles Q_p):
//   Q_p(e_B) <= kRoundingMargin * Q_p(e_A) + floor,
//   floor = kRoundingFloor * u * max |A64|
// with u the unit roundoff of A's type (2^-24 float, 2^-11 float16, 2^-8
// bfloat16, 2^-53 double): the floor stands for exact zeros and outputs A
// computes exactly, where e_A says nothing. For values of rank 3 or more
// with at least 16 elements per index of axis 1 (NCHW channels), also the
// largest |mean over a channel of the signed error| (B - A64 against
// A - A64): a shift of one channel, which rounding does not make (its
// errors average out over a channel), is seen there even when each element's
// error is within rounding. `worst` is the largest
// Q_p(e_B) / (margin * Q_p(e_A) + floor): at most 1 passes. Non-finite
// elements pass when B's equals A's or A64's (the same infinity, NaN and
// NaN). Integer and bool outputs (argmax indices, comparisons) pass element
// by element when B equals A or A64 there: a flip A's own rounding also
// makes is rounding.
#pragma once

#include <cstdint>
#include <string>

#include "model/tensor.h"

namespace bnorm {

inline constexpr double kRoundingMargin = 4.0;
inline constexpr double kRoundingFloor = 64.0;

// Nearest-rank quantiles and the mean of element errors.
struct ErrorStats {
  double median = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  void merge(const ErrorStats& o);  // the larger of each
};

struct RoundingDiff {
  bool pass = true;
  ErrorStats a;            // e_A: A's own rounding
  ErrorStats b;            // e_B: B against A64
  double floor = 0;
  // Largest |mean over an index of axis 1 of the signed error| of A and of
  // B (0 when the value has no such channels).
  double channel_a = 0, channel_b = 0;
  double worst = 0;        // largest ratio (above 1 fails)
  std::string worst_at;    // "median", "p90", "p99", "max", "channel mean", or "elements" for integer outputs
  int64_t outside = 0;     // elements B gets farther from A64 than margin * max(e_A) + floor (integers: equal to neither)
  int64_t elements = 0;
  std::string problem;     // shape or type disagreement; empty otherwise
  void merge(const RoundingDiff& o);
};

// B judged against A's own rounding. `a64` is A's output in float64 (double
// for floating outputs, A's own type otherwise).
RoundingDiff judge_rounding(const Tensor& a, const Tensor& a64, const Tensor& b);

// Where A has no float64 evaluation (quantized paths, float8 and 4-bit
// types: eval/run/float64.h), B is judged against A relative to the
// output's magnitude, not element by element: stat(|B - A|) <= rel * max |A|
// over finite pairs, `stat` one of ErrorStats' (median, p90, p99, max,
// mean), rel kScaledTolerance of A's type unless given. Non-finite elements
// must match; integer outputs must be equal (outside counts the others).
struct ScaledDiff {
  bool pass = true;
  ErrorStats error;     // |B - A|
  double scale = 0;     // max |A|
  double allowed = 0;   // rel * scale
  double rel = 0;
  std::string stat;
  int64_t outside = 0;  // non-finite or integer elements that differ
  int64_t elements = 0;
  std::string problem;
  void merge(const ScaledDiff& o);
};

// 1e-3 for float and double, 1e-2 for float16 and bfloat16, 0.25 for float8.
double scaled_tolerance(DType t);

// `stat` names a field of ErrorStats; Error(usage) listing them otherwise.
double stat_of(const ErrorStats& s, const std::string& stat);

ScaledDiff judge_scaled(const Tensor& a, const Tensor& b, const std::string& stat, double rel);

// ErrorStats of |x - ref| over pairs where both are finite.
ErrorStats error_stats(const Tensor& x, const Tensor& ref);

// The unit roundoff of a floating type (0 for other types).
double unit_roundoff(DType t);

}  // namespace bnorm
