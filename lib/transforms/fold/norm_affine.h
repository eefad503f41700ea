// Norm-family fold (`bnorm fold --norms all`): folds the trailing affine of
// LayerNormalization-17, RMSNormalization-23 and GroupNormalization-18/21
// (y = normalized * scale + bias) into the one linear node that reads y.
//
// Before:  X -> Norm(scale, bias) -> Y -> Gemm|MatMul|Conv 1x1 (W, c) -> Z
// After:   X -> Norm(ones, zeros or no bias) -> Y -> same op (W', c') -> Z
// Formula (norm_affine_math.h; k: the consumer's input feature):
//   W'[k, j] = scale[k] * W[k, j]        c'[j] = c[j] + sum_k bias[k] * W[k, j]
// Gemm: c' = C + (alpha / beta) * bias·B (beta = 0 or C absent: C' = alpha *
// bias·B and beta = 1). MatMul has no c: a bias is folded into the constant
// of the Add that alone reads the MatMul's output; a MatMul without such an
// Add folds only a norm without bias (or with zero bias).
//
// Preconditions (each failure is a reason, not an error):
//   - LayerNormalization/RMSNormalization normalize the last axis only
//     (axis = -1 or rank - 1) and feed MatMul (constant 2-D weight [K, N])
//     or Gemm (transA = 0, constant 2-D B); scale/bias hold K values along
//     the last axis (or one value);
//   - GroupNormalization feeds a Conv with group = 1, a kernel of ones and
//     no padding (constant W [O, C, 1...]); version 21's scale/bias are per
//     channel ([C]); version 18's are per group ([G]) and expand exactly to
//     the channels of each group;
//   - Y has exactly one consumer, in the same graph, and is not a graph
//     output; scale, bias, W and c are floating-point constants.
// The norm's scale becomes ones and its bias zeros (LayerNormalization's
// optional bias is dropped), in place when nothing else reads them, else as
// new initializers. Values are computed in float64 and rounded once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/verify.h"

namespace bnorm {

struct NormFoldReport {
  // Labels as in bn_fold.h's report; `output` is the consumer's output (or the
  // Add's, when the bias went into the Add after a MatMul).
  struct Folded {
    std::string graph, norm, norm_op, norm_label;
    int norm_index = -1;
    std::string consumer, consumer_op, consumer_label;
    std::string bias_into;  // "" (no bias to fold), "C", "B" (Conv bias) or the Add's label
    std::string output;                           // the last value the fold changes (Z)
    std::string norm_output, consumer_output;     // Y, and the consumer's output
    // Y's name after the fold: Y no longer holds the affine, so it is
    // renamed (no value keeps its name with another meaning: --trace and
    // eval --compare match values by name).
    std::string norm_output_after;
  };
  struct Skipped {
    std::string graph, norm, norm_op, norm_label, reason;
    int norm_index = -1;
  };
  int total = 0;  // LayerNormalization, RMSNormalization and GroupNormalization nodes, every graph
  std::vector<Folded> folded;
  std::vector<Skipped> skipped;
  std::vector<std::string> warnings;
  std::vector<FoldReport::Generated> generated;
  uint64_t model_bytes_before = 0, model_bytes_after = 0;
};

// Uses options.keep_generated (not rewrite_on_save: the weights are
// rewritten in memory, decoded through decode_as_saved).
NormFoldReport fold_norm_affines(Model& model, const FoldOptions& options = {});

// --verify for norm folds: the norm and its consumer (and Add) before, in
// float64, against the folded ones in the model's types, on the same seeded
// random X of the norm input's shape; the tolerance of verify.h.
// FoldCheck::bn holds the norm's label and ::producer the consumer's.
std::vector<FoldCheck> verify_norm_folds(const Model& before, const Model& after, const NormFoldReport& report,
                                         uint64_t seed,
                                         const std::map<std::string, InputRange>& ranges = {});

}  // namespace bnorm
