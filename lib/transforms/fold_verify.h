// fold --verify: proves each fold numerically.
//
// For every folded pair, two one-purpose models are cut out: the producer
// and the BatchNormalization as they were (from the model before folding),
// and the folded producer (from the model after). Both run in bnorm's
// evaluator on the same seeded random X of the producer input's shape
// (symbolic dims: the batch axis 2, others 8, at least the kernel's
// extent). The pair before folding runs in float64 (every tensor widened
// exactly), so the reference carries no rounding of its own; the folded
// producer runs in the model's own types, as a runtime would. The error is
// relative to the output's magnitude:
//   max |after - reference| <= rtol * max |reference|
// with rtol 1e-4 for float and double and 1e-2 for float16 and bfloat16.
// (Element-wise relative error is meaningless where BN's shift cancels the
// scaled input to near zero.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "transforms/fold.h"

namespace bnorm {

struct FoldCheck {
  std::string graph, bn, producer;  // the nodes' labels (model/node_label.h)
  bool producer_named = true;       // the producer has a name (its label is that name)
  std::string type;            // X's element type
  std::vector<int64_t> shape;  // X's shape used
  double max_abs = 0;  // max |after - reference|
  double max_rel = 0;  // max_abs / max |reference|
  double rtol = 0;
  bool pass = true;
};

std::vector<FoldCheck> verify_folds(const Model& before, const Model& after, const FoldReport& report, uint64_t seed);

}  // namespace bnorm
