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
#include <map>
#include <string>
#include <vector>

#include "model/graph_index.h"
#include "model/model.h"
#include "model/tensor.h"
#include "transforms/fold/bn_fold.h"

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
  std::string input;  // X's name: the input of the cut models, --input-range's NAME
};

// The ranges of `ranges` (--input-range) for the cut models of X = `x`.
std::map<std::string, InputRange> ranges_for(const std::map<std::string, InputRange>& ranges, const std::string& x);

// Shared with the norm-family fold's verification (norm_affine.h):
// A model of `nodes` (in order) whose only input is `x` (of x_type's element
// type and `shape`) and output `y`; every other input of the nodes is a
// constant of `src` (read through decode_as_saved). With `widen`, every
// floating tensor becomes float64 (exactly).
Model cut(const Model& src, const GraphIndex& index, const GraphIndex::Scope& scope,
          const std::vector<const onnx::NodeProto*>& nodes, const std::string& x, const onnx::TypeProto& x_type,
          const std::vector<int64_t>& shape, const std::string& y, bool widen);
// Sets check's type, rtol, max_abs, max_rel and pass: the folded output y1
// against the float64 reference y0.
void compare_fold(const std::vector<double>& y0, const Tensor& y1, FoldCheck& check);

std::vector<FoldCheck> verify_folds(const Model& before, const Model& after, const FoldReport& report, uint64_t seed,
                                    const std::map<std::string, InputRange>& ranges = {});

}  // namespace bnorm
